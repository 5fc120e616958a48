package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The A/B harness for whole programs ({@code benchmarks/run --programs}): runs every sample, in its
 * default and its long form, without and with {@code -javaagent:kmem4j-agent.jar}, interleaved
 * (the order alternates every round), for N rounds on each JDK given, and reports per program the
 * median over rounds of the paired ratios of throughput, peak RSS, CPU time and wall time, plus the
 * allocator's counters from its {@code summary=true} line. This is how "do no harm" is judged: an
 * operator sees the program, not the allocator.
 *
 * <p>The tables go to {@code BENCHMARKS.md} between the markers {@value #BEGIN} and {@value #END}
 * (appended at the end the first time; the JMH report keeps them, they are below its hand-written
 * marker), the raw runs to {@code benchmarks/target/programs/} (one log per run and
 * {@code runs.csv}). Run nothing else meanwhile: two cores shared with a build turn a 1.3× into noise.
 */
@Command(name = "benchmarks/run --programs", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Runs the sample programs with and without the kmem4j agent, interleaved, and reports the"
        + " median ratios (throughput, peak RSS, CPU, wall) per program and JDK.")
public final class ProgramsCommand implements Callable<Integer> {
    static final String BEGIN = "<!-- programs: begin (benchmarks/run --programs rewrites this block) -->";
    static final String END = "<!-- programs: end -->";
    private static final String TEMURIN_25 = "/usr/lib/jvm/temurin-25-jdk-amd64";

    @Option(names = "--rounds", defaultValue = "5", paramLabel = "N",
        description = "Paired rounds per program and form (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--program", split = ",", paramLabel = "NAME",
        description = "Programs to run (default: all): hello, echo, pipeline, hashchain, kvstore, netty-http,"
            + " netty-pooled, jetty, dropper, dropper-limit.")
    List<String> programs;

    @Option(names = "--form", split = ",", paramLabel = "FORM", defaultValue = "default,long",
        description = "Forms: default, long (default: ${DEFAULT-VALUE}).")
    List<String> forms;

    @Option(names = "--jdk", split = ",", paramLabel = "HOME",
        description = "JDK homes (default: the running JDK and " + TEMURIN_25 + " when present).")
    List<Path> jdks;

    @Option(names = "--agent", defaultValue = "agent/target/kmem4j-agent.jar", paramLabel = "JAR",
        description = "The agent jar (default: ${DEFAULT-VALUE}).")
    Path agent;

    @Option(names = "--agent-options", defaultValue = "summary=true", paramLabel = "OPTIONS",
        description = "The agent's options; keep summary=true for the counters (default: ${DEFAULT-VALUE}).")
    String agentOptions;

    @Option(names = "--samples", defaultValue = "sample-apps/target/kmem4j-samples.jar", paramLabel = "JAR",
        description = "The samples jar (default: ${DEFAULT-VALUE}).")
    Path samples;

    @Option(names = "--jvm-flag", paramLabel = "FLAG", description = "An extra JVM flag for both runs (repeatable).")
    List<String> jvmFlags = new ArrayList<>();

    @Option(names = "--timeout", defaultValue = "600", paramLabel = "SECONDS",
        description = "Kill a run after this long (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(names = "--out", defaultValue = "BENCHMARKS.md", paramLabel = "FILE",
        description = "Markdown file whose programs block is rewritten (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-md", description = "Print the tables only.")
    boolean noMarkdown;

    @Option(names = "--results-dir", defaultValue = "benchmarks/target/programs", paramLabel = "DIR",
        description = "Logs of every run and runs.csv (default: ${DEFAULT-VALUE}).")
    Path resultsDir;

    /**
     * @param args command-line arguments
     */
    public static void main(final String[] args) {
        System.exit(new CommandLine(new ProgramsCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        final List<Program> selected = selectedPrograms();
        final List<Program.Form> selectedForms = forms.stream()
            .map(f -> Program.Form.valueOf(f.trim().toUpperCase(Locale.ROOT))).toList();
        final List<Path> homes = jdkHomes();
        for (final Path jar : List.of(agent, samples)) {
            if (!Files.isRegularFile(jar)) {
                throw new CommandLine.ParameterException(new CommandLine(this), jar + " missing: build it with"
                    + " ./mvnw -B -q -pl agent,sample-apps,benchmarks -am -DskipTests package");
            }
        }
        int total = 0;
        for (final Program p : selected) {
            for (final Program.Form f : selectedForms) {
                total += f == Program.Form.LONG && !p.hasLongForm() ? 0 : 2 * rounds * homes.size();
            }
        }
        final String loadBefore = Proc.loadAverage();
        final long start = System.nanoTime();
        final List<Outcome> outcomes = new ArrayList<>();
        final StringBuilder csv = new StringBuilder("jdk,program,form,round,agent,exit,wall_ms,cpu_ms,peak_rss_bytes,"
            + "unit,throughput,allocations,fallbacks,reserved_bytes,hit_rate,log\n");
        int done = 0;
        for (final Path home : homes) {
            final Path java = home.resolve("bin/java");
            final String jdk = Proc.jdkLabel(java);
            for (final Program p : selected) {
                for (final Program.Form f : selectedForms) {
                    if (f == Program.Form.LONG && !p.hasLongForm()) {
                        continue;
                    }
                    final List<ProgramRun.Result> without = new ArrayList<>();
                    final List<ProgramRun.Result> with = new ArrayList<>();
                    for (int r = 0; r < rounds; r++) {
                        for (int k = 0; k < 2; k++) {
                            final boolean agentRun = Rounds.order(2, r)[k] == 1; // without first in even rounds
                            final String tag = jdk + "-" + p.name() + "-" + f.label() + "-r" + r + (agentRun ? "-agent" : "-jdk");
                            final ProgramRun.Result res = ProgramRun.run(java,
                                p.command(f, agentRun ? "-javaagent:" + agent.toAbsolutePath() + "=" + agentOptions : null,
                                    samples.toAbsolutePath().toString(), jvmFlags),
                                resultsDir.resolve(tag.replaceAll("[^A-Za-z0-9.+-]", "_") + ".log"), timeoutSeconds);
                            (agentRun ? with : without).add(res);
                            done++;
                            System.out.printf(Locale.ROOT, "[programs] %d/%d JDK %s %s %s round %d %s: exit %d, %.1f s wall,"
                                    + " %.1f s CPU, peak RSS %.0f MB%s%n", done, total, jdk, p.name(), f.label(), r + 1,
                                agentRun ? "with agent" : "without", res.exitCode(), res.wallMillis() / 1000.0,
                                res.cpuMillis() / 1000.0, res.peakRssBytes() / 1048576.0,
                                Double.isNaN(res.throughput()) ? "" : String.format(Locale.ROOT, ", %.1f %s/s",
                                    res.throughput(), res.unit()));
                            csv.append(String.join(",", jdk, p.name(), f.label(), Integer.toString(r + 1),
                                Boolean.toString(agentRun), Integer.toString(res.exitCode()),
                                Long.toString(res.wallMillis()), Long.toString(res.cpuMillis()),
                                Long.toString(res.peakRssBytes()), res.unit() == null ? "" : res.unit(),
                                Double.toString(res.throughput()), Long.toString(res.allocations()),
                                Long.toString(res.fallbacks()), Long.toString(res.reservedBytes()),
                                Double.toString(res.hitRate()), res.log().toString())).append('\n');
                            if (!res.ok()) {
                                System.out.println("[programs]   failed: see " + res.log());
                            }
                        }
                    }
                    outcomes.add(new Outcome(jdk, p, f, without, with));
                }
            }
        }
        Files.createDirectories(resultsDir);
        Files.writeString(resultsDir.resolve("runs.csv"), csv, StandardCharsets.UTF_8);
        final double minutes = (System.nanoTime() - start) / 60e9;
        final String block = block(outcomes, minutes, loadBefore, Proc.loadAverage());
        System.out.println(block);
        if (!noMarkdown) {
            write(out, BEGIN, END, block);
            System.out.println("[programs] wrote the programs block of " + out);
        }
        return outcomes.stream().allMatch(o -> o.okRounds() > 0) ? 0 : 1;
    }

    private String block(final List<Outcome> outcomes, final double minutes, final String loadBefore,
                         final String loadAfter) {
        final StringBuilder b = new StringBuilder();
        b.append(BEGIN).append("\n\n## Whole programs, with and without the agent\n\n");
        b.append("Generated by `benchmarks/run --programs --rounds ").append(rounds).append("` on ")
            .append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")))
            .append(String.format(Locale.ROOT, " (%.1f min)", minutes)).append(". Each round runs the program once")
            .append(" without and once with `-javaagent:kmem4j-agent.jar=").append(agentOptions)
            .append("` (the order alternates); a ratio is with / without within a round, and the table shows the")
            .append(" median over rounds (absolute figures: medians too). Peak RSS is `VmHWM`; CPU is user + system")
            .append(" time of the process; wall time includes JVM start-up. Load average before / after: ")
            .append(loadBefore).append(" / ").append(loadAfter).append(".\n\n");
        b.append("Programs: ").append(outcomes.stream().map(Outcome::program).distinct()
            .map(p -> "`" + p.name() + "` (" + p.what() + "; default `" + String.join(" ", p.defaultArgs())
                + "`, long `" + String.join(" ", p.longArgs()) + "`" + (p.jvmFlags().isEmpty() ? "" : ", `"
                + String.join(" ", p.jvmFlags()) + "`") + ")").collect(Collectors.joining("; "))).append(".\n\n");
        b.append("### Goals\n\n").append(ProgramsTable.goals(outcomes)).append('\n');
        b.append("### Results\n").append(ProgramsTable.results(outcomes)).append('\n').append(END).append('\n');
        return b.toString();
    }

    /** Replaces the block of {@code file} between the markers {@code begin} and {@code end} (or appends it). */
    static void write(final Path file, final String begin, final String end, final String block) throws IOException {
        final String old = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        final int a = old.indexOf(begin);
        final int z = old.indexOf(end);
        final String next;
        if (a >= 0 && z > a) {
            next = old.substring(0, a) + block + old.substring(old.indexOf('\n', z) + 1);
        } else {
            next = old + (old.endsWith("\n") || old.isEmpty() ? "" : "\n") + "\n" + block;
        }
        Files.writeString(file, next, StandardCharsets.UTF_8);
    }

    private List<Program> selectedPrograms() {
        if (programs == null || programs.isEmpty()) {
            return Program.ALL;
        }
        final List<Program> list = new ArrayList<>();
        for (final String n : programs) {
            list.add(Program.named(n.trim()).orElseThrow(() -> new CommandLine.ParameterException(
                new CommandLine(this), "unknown program '" + n + "'; known: "
                    + Program.ALL.stream().map(Program::name).collect(Collectors.joining(", ")))));
        }
        return list;
    }

    private List<Path> jdkHomes() {
        if (jdks != null && !jdks.isEmpty()) {
            return checkedJdkHomes(jdks, this);
        }
        final Set<Path> homes = new LinkedHashSet<>();
        homes.add(Path.of(System.getProperty("java.home")));
        if (Files.isExecutable(Path.of(TEMURIN_25, "bin/java"))) {
            homes.add(Path.of(TEMURIN_25));
        }
        return List.copyOf(homes);
    }

    /** @return {@code homes}, each checked to hold {@code bin/java} (else a usage error of {@code command}) */
    static List<Path> checkedJdkHomes(final List<Path> homes, final Object command) {
        for (final Path h : homes) {
            if (!Files.isExecutable(h.resolve("bin/java"))) {
                throw new CommandLine.ParameterException(new CommandLine(command), "--jdk " + h + ": no bin/java there");
            }
        }
        return homes;
    }
}
