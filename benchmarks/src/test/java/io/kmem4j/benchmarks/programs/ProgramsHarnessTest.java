package io.kmem4j.benchmarks.programs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The A/B harness's measuring and reporting, on real child processes and made-up rounds. */
class ProgramsHarnessTest {

    @TempDir
    Path dir;

    private static ProgramRun.Result result(final boolean ok, final long wall, final long cpu, final long rss,
                                            final double throughput) {
        return new ProgramRun.Result(ok ? 0 : 1, wall, cpu, rss, "ops", throughput, 10, 0, 4 << 20, 99.0, Path.of("x"));
    }

    @Test
    void theHelpNamesEveryProgram() {
        final String help = new picocli.CommandLine(new ProgramsCommand()).getUsageMessage();
        for (final Program p : Program.ALL) {
            assertThat(help).as("--program's help").contains(p.name());
        }
    }

    @Test
    void ratiosArePairedWithinARoundAndTheMedianIsTakenOverGoodRoundsOnly() {
        final Program echo = Program.named("echo").orElseThrow();
        final Outcome o = new Outcome("17", echo, Program.Form.DEFAULT,
            List.of(result(true, 1000, 1000, 100, 100), result(true, 1000, 1000, 100, 200),
                result(false, 1, 1, 1, 1), result(true, 1000, 1000, 100, 50)),
            List.of(result(true, 1100, 900, 110, 90), result(true, 1000, 1000, 100, 220),
                result(true, 5, 5, 5, 5), result(true, 1000, 1000, 120, 60)));
        assertThat(o.okRounds()).isEqualTo(3);
        assertThat(o.failedRounds()).isEqualTo(1);
        // per-round throughput ratios 0.9, 1.1, 1.2 -> median 1.1 (the failed round is left out)
        assertThat(o.medianRatio(ProgramRun.Result::throughput)).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-9));
        // RSS differences +10, 0, +20 -> median +10
        assertThat(o.medianDifference(r -> r.peakRssBytes())).isEqualTo(10.0);
        assertThat(o.median(false, ProgramRun.Result::throughput)).isEqualTo(100.0);
    }

    @Test
    void theGoalsTableSaysMissedWhenTheAgentMakesAProgramSlowerOrFatter() {
        final Program echo = Program.named("echo").orElseThrow();
        final Outcome slower = new Outcome("17", echo, Program.Form.DEFAULT, List.of(result(true, 1, 1, 100, 100)),
            List.of(result(true, 1, 1, 90, 80)));
        assertThat(ProgramsTable.goals(List.of(slower)))
            .contains("| throughput with / without | 17 | echo | default | 0.80× | ≥ 1.00× | **missed** |")
            .contains("| peak RSS with / without | 17 | echo | default | 0.90× | ≤ 1.00× | met |");
    }

    @Test
    void theGoalsTableShowsTheLowestAndHighestRoundBesideTheMedian() {
        final Program echo = Program.named("echo").orElseThrow();
        // throughput ratios 0.9, 1.2, 1.05 (median 1.05); RSS ratios 1.1, 0.8, 1.0 (median 1.0)
        final Outcome o = new Outcome("25", echo, Program.Form.LONG,
            List.of(result(true, 100, 100, 100, 100), result(true, 100, 100, 100, 100), result(true, 100, 100, 100, 100)),
            List.of(result(true, 100, 100, 110, 90), result(true, 100, 100, 80, 120), result(true, 100, 100, 100, 105)));
        assertThat(ProgramsTable.goals(List.of(o)))
            .contains("| throughput with / without | 25 | echo | long | 1.05× (0.90–1.20×) | ≥ 1.00× | met |")
            .contains("| peak RSS with / without | 25 | echo | long | 1.00× (0.80–1.10×) | ≤ 1.00× | met |");
    }

    @Test
    void aRunMeasuresCpuWallPeakRssAndParsesThroughputAndTheSummary() throws IOException, InterruptedException {
        final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        final Path src = dir.resolve("Busy.java");
        Files.writeString(src, "public class Busy { public static void main(String[] a) {"
            + " long x = 0; long end = System.nanoTime() + 300_000_000L; while (System.nanoTime() < end) { x += x ^ 7; }"
            + " byte[] big = new byte[64 << 20]; java.util.Arrays.fill(big, (byte) 1);"
            + " System.out.println(\"busy: throughput widgets/s=123.5 elapsed_ms=1\");"
            + " System.err.println(\"[kmem4j] summary: allocations=42 frees=40 (explicit=40, gc=0) live=2 bytesInUse=10"
            + " bytesReserved=4194304 fallbacks=3\");"
            + " System.err.println(\"[kmem4j] summary: remoteFreesSent=0 remoteFreesAbsorbed=0 magazineHitRate=97.5%\");"
            + " System.exit(x == 1 ? 1 : 0); } }");
        final ProgramRun.Result r = ProgramRun.run(java, List.of("-Xmx256m", src.toString()), dir.resolve("busy.log"), 120);
        assertThat(r.exitCode()).isZero();
        assertThat(r.cpuMillis()).as("CPU of the child: at least its 300 ms busy loop").isGreaterThanOrEqualTo(250);
        assertThat(r.wallMillis()).isGreaterThanOrEqualTo(r.cpuMillis() / Runtime.getRuntime().availableProcessors());
        assertThat(r.peakRssBytes()).as("the 64 MiB array was touched").isGreaterThan(64L << 20);
        assertThat(r.unit()).isEqualTo("widgets");
        assertThat(r.throughput()).isEqualTo(123.5);
        assertThat(r.allocations()).isEqualTo(42);
        assertThat(r.fallbacks()).isEqualTo(3);
        assertThat(r.reservedBytes()).isEqualTo(4194304);
        assertThat(r.hitRate()).isEqualTo(97.5);
    }

    @Test
    void theProgramsBlockIsReplacedInPlaceAndTheRestOfTheFileKept() throws IOException {
        final Path md = dir.resolve("B.md");
        Files.writeString(md, "# head\n\nkept above\n");
        ProgramsCommand.write(md, ProgramsCommand.BEGIN, ProgramsCommand.END,
            ProgramsCommand.BEGIN + "\nfirst\n" + ProgramsCommand.END + "\n");
        Files.writeString(md, Files.readString(md) + "kept below\n");
        ProgramsCommand.write(md, ProgramsCommand.BEGIN, ProgramsCommand.END,
            ProgramsCommand.BEGIN + "\nsecond\n" + ProgramsCommand.END + "\n");
        assertThat(Files.readString(md)).isEqualTo("# head\n\nkept above\n\n" + ProgramsCommand.BEGIN + "\nsecond\n"
            + ProgramsCommand.END + "\nkept below\n");
    }
}
