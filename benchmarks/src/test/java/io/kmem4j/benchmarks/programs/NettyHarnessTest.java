package io.kmem4j.benchmarks.programs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The server benchmark's parsing, pairing and reporting, on made-up runs (wrk is not needed). */
class NettyHarnessTest {

    private static final String WRK = """
        Running 30s test @ http://127.0.0.1:40000/s
          1 threads and 64 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency   612.50us  301.20us  12.31ms   91.02%
            Req/Sec   105.11k     4.20k  112.93k    72.33%
          Latency Distribution
             50%  580.00us
             75%  700.00us
             90%  812.00us
             99%    1.52ms
          3138237 requests in 30.10s, 1.01GB read
          Socket errors: connect 0, read 2, write 0, timeout 1
          Non-2xx or 3xx responses: 4
        Requests/sec: 104259.37
        Transfer/sec:     34.25MB
        """;

    private static ServerRun.Result run(final boolean ok, final double rps, final double p99Micros, final long before,
                                        final long after) {
        final LoadResult w = new LoadResult(1000, 1, rps, 100, p99Micros, 0, 0);
        return new ServerRun.Result(ok ? null : "failed", "4.2.18.Final", "X", w, 100, new long[] {200, 100, 300}, before,
            before * 3, new long[] {after, after, after}, 10, 10, Map.of(), Path.of("x"));
    }

    @Test
    void wrksLatencyReportIsParsedWithItsUnits() {
        final LoadResult r = Wrk.parse(WRK);
        assertThat(r.requests()).isEqualTo(3_138_237);
        assertThat(r.seconds()).isCloseTo(30.10, offset(1e-9));
        assertThat(r.rps()).isEqualTo(104_259.37);
        assertThat(r.p50Micros()).isCloseTo(580, offset(1e-9));
        assertThat(r.p99Micros()).isCloseTo(1520, offset(1e-9));
        assertThat(r.errors()).isEqualTo(3);
        assertThat(r.badAnswers()).isEqualTo(4);
        assertThat(r.clean()).isFalse();
        assertThat(Wrk.parse(WRK.replace("Socket errors: connect 0, read 2, write 0, timeout 1", "")
            .replace("Non-2xx or 3xx responses: 4", "")).clean()).isTrue();
        assertThat(Wrk.command(1, 1, 64, 30, "http://h/s")).containsExactly("taskset", "-c", "1", "wrk", "-t1", "-c64",
            "-d30s", "--latency", "http://h/s");
    }

    @Test
    void armsRotateEveryRoundAndTwoArmsAlternateAsTheProgramsHarnessDid() {
        assertThat(Rounds.order(3, 0)).containsExactly(0, 1, 2);
        assertThat(Rounds.order(3, 1)).containsExactly(1, 2, 0);
        assertThat(Rounds.order(3, 2)).containsExactly(2, 0, 1);
        assertThat(Rounds.order(3, 3)).containsExactly(0, 1, 2);
        assertThat(Rounds.order(2, 0)).containsExactly(0, 1);
        assertThat(Rounds.order(2, 1)).containsExactly(1, 0);
        assertThat(Rounds.median(new double[] {3, Double.NaN, 1, 2})).isEqualTo(2);
    }

    @Test
    void ratiosAreTakenAgainstTheBetterNettyAllocatorRoundByRoundAndFailedRunsLeftOut() {
        final ServerCell c = new ServerCell(Protocol.HTTP, "17", "4.2.18.Final", "small", 1, List.of("pooled", "adaptive", "kmem4j"),
            List.of(List.of(run(true, 100, 1000, 100, 110), run(true, 90, 900, 100, 110), run(true, 100, 1000, 100, 110)),
                List.of(run(true, 120, 1100, 100, 300), run(false, 500, 1, 1, 1), run(true, 70, 700, 100, 300)),
                List.of(run(true, 132, 990, 100, 105), run(true, 99, 1820, 100, 105), run(false, 1, 1, 1, 1))));
        // the better Netty allocator: pooled (median req/s 100 against adaptive's 95), although adaptive had the
        // better req/s in round 1 and the better p99 in round 3: every figure is compared with pooled's
        assertThat(c.betterNetty()).isEqualTo("pooled");
        // round 1: 132 / 100; round 2: 99 / 90; round 3: kmem4j failed -> median 1.21
        assertThat(c.ratioToBetterNetty("kmem4j", ServerRun.Result::rps)).isCloseTo(1.21, offset(1e-9));
        // p99: round 1 990 / 1000, round 2 1820 / 900 -> median 1.5061
        assertThat(c.ratioToBetterNetty("kmem4j", ServerRun.Result::p99Micros)).isCloseTo(1.5061, offset(1e-4));
        assertThat(c.okRounds("adaptive")).isEqualTo(2);
        assertThat(c.median("kmem4j", ServerRun.Result::burstRatio)).isCloseTo(1.05, offset(1e-9));
        assertThat(NettyTable.goals(List.of(c)))
            .contains("| kmem4j req/s / better Netty allocator's (pooled) | HTTP/1.1 | 17 | 4.2.18.Final | small | 1 | 1.21× (1.10–1.32×) | ≥ 1.00× | met |")
            .contains("| kmem4j p99 / its p99 | HTTP/1.1 | 17 | 4.2.18.Final | small | 1 | 1.51× (0.99–2.02×) | ≤ 1.00× | **missed** |")
            .contains("| kmem4j server CPU per request / its | HTTP/1.1 | 17 | 4.2.18.Final | small | 1 | 1.00× (1.00–1.00×) | (no goal) | — |")
            .contains("| kmem4j RSS 10 s after the burst / before it | HTTP/1.1 | 17 | 4.2.18.Final | small | 1 | 1.05× | ≤ 1.25× | met |")
            .doesNotContain("| pooled");
        assertThat(NettyTable.table(c)).contains("| adaptive | 2 (1 failed) | 95 |");
        assertThat(ProgramsTable.spread(new double[] {1.2, Double.NaN, 0.9, 1.0})).isEqualTo("1.00× (0.90–1.20×)");
        assertThat(ProgramsTable.spread(new double[] {0.95})).as("one round: no range").isEqualTo("0.95×");
        assertThat(ProgramsTable.spread(new double[] {0.9996, 0.98, 1.01})).as("a median at a goal's edge: four decimals, so"
            + " 1.00× never reads as missed").isEqualTo("0.9996× (0.98–1.01×)");
        assertThat(ProgramsTable.goalRatio(1.0)).isEqualTo("1.00×");
    }

    @Test
    void aRunsFiguresComeFromItsSamplesAndTheServersMetricsLines() {
        final Map<String, Map<String, String>> m = ServerRun.metrics(List.of("server: listening port=1 upload-port=2",
            "server: metrics label=load gcCount=3 gcMillis=10",
            "server: metrics label=before gcCount=8 gcMillis=25 kmem4j.Buffers=42"));
        final ServerRun.Result r = new ServerRun.Result(null, "4.2", "X", new LoadResult(2000, 1, 2000, 1, 2, 0, 0), 30,
            new long[] {300, 100, 200}, 100, 400, new long[] {250, 200, 175}, 5, 5, m, Path.of("x"));
        assertThat(r.gcCount()).isEqualTo(5);
        assertThat(r.gcMillis()).isEqualTo(15);
        assertThat(r.metric("before", "kmem4j.Buffers")).isEqualTo(42);
        assertThat(r.metric("end", "kmem4j.Buffers")).isNaN();
        assertThat(r.rssMedian()).isEqualTo(200);
        assertThat(r.rssMax()).isEqualTo(300);
        assertThat(r.cpuMicrosPerRequest()).isEqualTo(15);
        assertThat(r.burstRatio()).isEqualTo(1.75);
        assertThat(r.burstResident()).isEqualTo(0.25);
    }

    @Test
    void everyArmGetsTheSameHeapFlagsAndOnlyItsAllocatorsOwn() {
        final NettyCommand cmd = new NettyCommand();
        new picocli.CommandLine(cmd).parseArgs();
        final List<String> common = cmd.commonFlags();
        assertThat(common).contains("-Xms128m", "-Xmx128m", "-XX:+AlwaysPreTouch");
        assertThat(cmd.armFlags(Protocol.HTTP, "pooled")).isEqualTo(append(common, "-Dio.netty.allocator.type=pooled"));
        assertThat(cmd.armFlags(Protocol.HTTP, "adaptive")).isEqualTo(append(common, "-Dio.netty.allocator.type=adaptive"));
        assertThat(cmd.armFlags(Protocol.HTTP, "kmem4j")).startsWith(common.toArray(String[]::new)).hasSize(common.size() + 1);
        assertThat(cmd.armFlags(Protocol.HTTP, "kmem4j").get(common.size())).startsWith("-javaagent:")
            .endsWith("kmem4j-agent.jar=presets=netty-allocator");
        final String help = new picocli.CommandLine(new NettyCommand()).getUsageMessage();
        for (final String arm : NettyCommand.ARMS) {
            assertThat(help).contains(arm);
        }
    }

    private static List<String> append(final List<String> list, final String last) {
        final List<String> l = new java.util.ArrayList<>(list);
        l.add(last);
        return l;
    }
}
