package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.JMException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The samples of {@code kmem4j-samples.jar} other than echo — {@code pipeline}, {@code hashchain},
 * {@code kvstore}, {@code netty-http} (Netty's default allocator and
 * {@code -Dio.netty.allocator.type=unpooled}), {@code jetty} and {@code dropper} — each in a forked JVM on every
 * supported JDK, once without and once with {@code -javaagent:kmem4j-agent.jar=summary=true}.
 *
 * <p>Both runs must print the same verified result line (throughput lines differ, of course). The
 * agent run uses {@code --hold}: once the sample has finished and released (or dropped) all its
 * buffers, the allocator is read over JMX, GC is run until {@code BytesInUse} is back to the live
 * set, and only then is stdin closed so the JVM exits and prints its summary.
 *
 * <p>Each case prints {@code [kmem4j-it] <sample> JDK <v>: without=<throughput> with=<throughput>
 * jmx={...}} so the CI log shows both throughputs of the same build on the same machine. They are
 * not asserted (timing goals live in the benchmarks).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SamplesAgentIT {

    /** Startup plus a run; each run takes a few seconds. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MBEAN_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration GC_SETTLE_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration GC_POLL_INTERVAL = Duration.ofMillis(200);

    /**
     * What may stay in use once a sample has finished and GC has run. Every sample releases or drops
     * all its buffers before it holds (the HTTP samples stop their servers and clients, so Netty's
     * and Jetty's pools become garbage too). What can remain are the JDK's own per-thread temporary
     * direct buffers of threads still alive, notably the RMI threads serving this JMX connection
     * (one 8 KiB buffer on JDK 17, none on JDK 25; see EchoAgentIT), and a few small buffers
     * libraries keep for the life of the JVM (Netty's small start-up buffers). Observed after GC:
     * at most 4 buffers / 16 KiB (netty-http on JDK 17), 2 buffers / 7 bytes (netty-http on JDK 25),
     * 0 for the other samples on JDK 25. 64 KiB is far below what a leak would leave (each run
     * allocates thousands of buffers, tens to hundreds of MB).
     */
    private static final long BYTES_IN_USE_BOUND = 64 * 1024;
    private static final long LIVE_BUFFERS_BOUND = 16;

    private static final String[] COUNTERS = {
        "Allocations", "Frees", "ExplicitFrees", "GcFrees", "LiveBuffers", "BytesInUse", "BytesReserved",
        "Fallbacks", "RemoteFreesSent", "RemoteFreesAbsorbed", "Chunks", "ThreadCaches",
    };

    /** A line of a Java stack trace or an exception/error report. */
    private static final Pattern STACK_TRACE_LINE =
            Pattern.compile(".*(Exception|Error:).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*|^\\s+\\.\\.\\. \\d+ more$");

    /** A row of the summary's per-cache table: name, allocs, active, slabs, hit%, addr-order. */
    private static final Pattern CACHE_ROW = Pattern.compile(
            "^\\[kmem4j] summary: (\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+([\\d.]+)%\\s+([\\d.]+)\\s*$");

    /** One sample as run by this test: small sizes so that each run takes a few seconds. */
    enum Sample {
        PIPELINE("pipeline", "items", "items/s", List.of(), "--items", "20000"),
        // 40 untimed traversals first: at this size the walk is short, and without them the figure mostly
        // measures when the JIT (competing with the agent's own start-up on a small machine) compiles it
        HASHCHAIN("hashchain", "nodes", "traversals/s", List.of(), "--nodes", "40000", "--warmup-traversals", "40",
                "--traversals", "40"),
        KVSTORE("kvstore", "ops", "ops/s", List.of(), "--ops", "200000", "--keys", "10000"),
        NETTY_HTTP("netty-http", "requests", "requests/s", List.of(), "--requests", "2000"),
        NETTY_HTTP_UNPOOLED("netty-http", "requests", "requests/s", List.of("-Dio.netty.allocator.type=unpooled"),
                "--requests", "2000"),
        JETTY("jetty", "requests", "requests/s", List.of(), "--requests", "2000"),
        // a small heap for frequent collections, the direct limit far above what the run holds: no fallback
        DROPPER("dropper", "messages", "messages/s", List.of("-Xmx256m", "-XX:MaxDirectMemorySize=2g"),
                "--messages", "100000", "--slots", "2048");

        final String command;
        /** The first key of the result line, e.g. {@code pipeline: items=...}. */
        final String resultKey;
        /** The key of the throughput line reported by this test. */
        final String throughputKey;
        final List<String> jvmArgs;
        final List<String> args;

        Sample(String command, String resultKey, String throughputKey, List<String> jvmArgs, String... args) {
            this.command = command;
            this.resultKey = resultKey;
            this.throughputKey = throughputKey;
            this.jvmArgs = jvmArgs;
            this.args = List.of(args);
        }

        String label() {
            return this == NETTY_HTTP_UNPOOLED ? "netty-http(unpooled)" : command;
        }

        String resultPrefix() {
            return command + ": " + resultKey + "=";
        }

        String throughputPrefix() {
            return command + ": throughput ";
        }
    }

    static Stream<Arguments> cases() {
        return TestJdks.full().flatMap(jdk -> Stream.of(Sample.values()).map(s -> Arguments.of(jdk, s)));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("cases")
    void sameVerifiedResultWithAndWithoutAgentAndSlabBuffersReturnAfterGc(Jdk jdk, Sample sample) {
        Path samples = Artifacts.samplesJar();
        String name = sample.name().toLowerCase(Locale.ROOT).replace('_', '-');

        // 1. Without the agent.
        String plainResult;
        String plainThroughput;
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, name + "-plain-" + jdk.label())
                .jvmArgs(sample.jvmArgs)
                .jar(samples)
                .programArgs(sample.command)
                .programArgs(sample.args)
                .start()) {
            jvm.closeStdin();
            int exit = jvm.waitForExit(RUN_TIMEOUT);
            assertThat(exit).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
            plainResult = verifiedResultLine(jvm, sample);
            plainThroughput = throughput(jvm, sample);
            assertNoStackTraces(jvm);
        }

        // 2. With the agent, holding after the run so the allocator can be read over JMX.
        Map<String, Long> beforeGc;
        Map<String, Long> afterGc;
        double magazineHitRate;
        String agentThroughput;
        List<String> stderr;
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, name + "-agent-" + jdk.label())
                .jvmArgs(sample.jvmArgs)
                .jvmArgs("-javaagent:" + Artifacts.agentJar() + "=summary=true")
                .jar(samples)
                .programArgs(sample.command)
                .programArgs(sample.args)
                .programArgs("--hold")
                .start()) {
            jvm.awaitStdoutLine(sample.command + ": holding", RUN_TIMEOUT);
            assertThat(verifiedResultLine(jvm, sample))
                    .as("result line with the agent vs. without it on %s", jdk)
                    .isEqualTo(plainResult);
            agentThroughput = throughput(jvm, sample);

            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(ALLOCATOR, MBEAN_TIMEOUT);
                beforeGc = jmx.readLongs(ALLOCATOR, COUNTERS);
                magazineHitRate = readDouble(jmx, "MagazineHitRate");
                assertServedAsExpected(sample, jdk, beforeGc);

                // Cleaners of dropped buffers run after GC discovered them: poll, with a GC before each read.
                await("BytesInUse back to the live set (<= " + BYTES_IN_USE_BOUND + " bytes) after "
                        + sample.label() + " on " + jdk)
                        .atMost(GC_SETTLE_TIMEOUT)
                        .pollDelay(Duration.ZERO)
                        .pollInterval(GC_POLL_INTERVAL)
                        .pollInSameThread()
                        .untilAsserted(() -> {
                            jmx.gc();
                            Map<String, Long> now = jmx.readLongs(ALLOCATOR, COUNTERS);
                            assertThat(now.get("BytesInUse"))
                                    .as("BytesInUse after GC; now: %s, before GC: %s", now, beforeGc)
                                    .isLessThanOrEqualTo(BYTES_IN_USE_BOUND);
                            assertThat(now.get("LiveBuffers"))
                                    .as("LiveBuffers after GC; now: %s, before GC: %s", now, beforeGc)
                                    .isLessThanOrEqualTo(LIVE_BUFFERS_BOUND);
                            assertThat(now.get("Frees")).as("Frees == ExplicitFrees + GcFrees in %s", now)
                                    .isEqualTo(now.get("ExplicitFrees") + now.get("GcFrees"));
                            assertThat(now.get("Allocations") - now.get("Frees"))
                                    .as("Allocations - Frees == LiveBuffers in %s", now)
                                    .isEqualTo(now.get("LiveBuffers"));
                        });
                afterGc = jmx.readLongs(ALLOCATOR, COUNTERS);
                if (sample == Sample.DROPPER) {
                    assertThat(afterGc.get("ExplicitFrees")).as("ExplicitFrees of a program that frees nothing, after GC, %s on %s: %s",
                            sample.label(), jdk, afterGc).isZero();
                }
            }

            jvm.closeStdin();
            int exit = jvm.waitForExit(EXIT_TIMEOUT);
            assertThat(exit).as("exit code of %s after stdin was closed\n%s", jvm, jvm.describe()).isZero();
            assertNoStackTraces(jvm);
            stderr = jvm.stderrLines();
        }

        Map<String, String> summary = summary(stderr);
        Map<String, Object> jmxFigures = new LinkedHashMap<>(beforeGc);
        jmxFigures.put("MagazineHitRate", String.format(Locale.ROOT, "%.3f", magazineHitRate));
        jmxFigures.put("BytesInUseAfterGc", afterGc.get("BytesInUse"));
        jmxFigures.put("LiveBuffersAfterGc", afterGc.get("LiveBuffers"));
        String addressOrder = addressOrder(stderr);
        System.out.println(TestJdks.LOG_PREFIX + sample.label() + " JDK " + jdk.version()
                + ": without=" + plainThroughput + " " + sample.throughputKey
                + " with=" + agentThroughput + " " + sample.throughputKey
                + " jmx=" + jmxFigures
                + (addressOrder.isEmpty() ? "" : " addrOrder(summary)=" + addressOrder)
                + " summary={allocations=" + summary.get("allocations") + ", fallbacks=" + summary.get("fallbacks")
                + ", remoteFreesSent=" + summary.get("remoteFreesSent") + "}");

        assertThat(Long.parseLong(summary.get("allocations")))
                .as("the exit summary counts at least what JMX saw before GC: %s vs %s", summary, beforeGc)
                .isGreaterThanOrEqualTo(beforeGc.get("Allocations"));
    }

    /**
     * What the allocator must have served, by sample and JDK (observed on JDK 17 and 25):
     *
     * <ul>
     *   <li>pipeline, hashchain, kvstore call {@code ByteBuffer.allocateDirect} themselves with sizes
     *       up to 16 KiB: every one of their buffers is a slab buffer, on every JDK. pipeline releases
     *       each buffer on a consumer thread, so frees reach the producers' caches as deferred
     *       cross-thread frees ({@code RemoteFreesSent > 0}).
     *   <li>netty-http with {@code -Dio.netty.allocator.type=unpooled}: every Netty direct
     *       {@code ByteBuf} is one {@code allocateDirect}, so thousands of slab buffers; those above
     *       64 KiB (the 200,000-byte bodies) pass through to the JDK ({@code Fallbacks}). On JDK 17
     *       Netty frees them explicitly through the cleaner; on JDK 24+ Netty 4.2 does not use
     *       {@code sun.misc.Unsafe} by default and leaves them to GC ({@code ExplicitFrees == 0}
     *       observed on JDK 25), which the GC step below shows is enough.
     *   <li>netty-http with Netty's defaults (the adaptive allocator in 4.2): Netty takes big
     *       chunks and carves its buffers itself. On JDK 17 the chunks come from
     *       {@code allocateDirect} but are larger than the largest size class, so they are
     *       {@code Fallbacks} and only a handful of small buffers are slab buffers. On JDK 24+ Netty
     *       takes its chunks from {@code Arena} memory, not {@code allocateDirect}, so the allocator
     *       sees (almost) nothing of the HTTP traffic: nothing is asserted about volume there.
     *   <li>jetty: Jetty 12's {@code ArrayByteBufferPool} allocates its direct buffers (≤ 64 KiB)
     *       with {@code allocateDirect} on both JDKs and never frees them explicitly: buffers it
     *       does not keep are dropped and freed by GC.
     *   <li>dropper: 4 KiB buffers, none ever freed by the program: {@code ExplicitFrees == 0} before
     *       and after GC, also on 26+, where the allocating thread runs pending buffer cleaners itself
     *       when it helps the JDK before growing (those are GC frees). Its small heap makes collections
     *       frequent; its direct-memory limit is far above what it holds, so the JDK's own path, whose
     *       reservation also runs pending cleaners on the calling thread (26+) and which kmem4j cannot
     *       tell apart, never runs.
     * </ul>
     */
    private static void assertServedAsExpected(Sample sample, Jdk jdk, Map<String, Long> c) {
        String context = sample.label() + " on " + jdk + ", counters before GC: " + c;
        switch (sample) {
            case PIPELINE -> {
                assertThat(c.get("Allocations")).as("Allocations, %s", context).isGreaterThanOrEqualTo(20_000);
                assertThat(c.get("RemoteFreesSent")).as("RemoteFreesSent (consumers free producers' buffers), %s", context)
                        .isPositive();
            }
            case HASHCHAIN -> // 40,000 nodes + 20,000 re-inserted
                    assertThat(c.get("Allocations")).as("Allocations, %s", context).isGreaterThanOrEqualTo(60_000);
            case KVSTORE -> // 10,000 loaded + ~40,000 puts
                    assertThat(c.get("Allocations")).as("Allocations, %s", context).isGreaterThanOrEqualTo(40_000);
            case NETTY_HTTP_UNPOOLED -> {
                assertThat(c.get("Allocations")).as("Allocations, %s", context).isGreaterThanOrEqualTo(2_000);
                assertThat(c.get("Fallbacks")).as("Fallbacks (bodies > 64 KiB), %s", context).isPositive();
            }
            case NETTY_HTTP -> {
                if (jdk.feature() < 24) {
                    assertThat(c.get("Fallbacks")).as("Fallbacks (Netty's adaptive chunks > 64 KiB), %s", context)
                            .isPositive();
                }
            }
            case JETTY -> assertThat(c.get("Allocations")).as("Allocations, %s", context).isPositive();
            case DROPPER -> {
                assertThat(c.get("Allocations")).as("Allocations, %s", context).isGreaterThanOrEqualTo(100_000);
                assertThat(c.get("Fallbacks")).as("Fallbacks (the limit is far above the run), %s", context).isZero();
                // it frees nothing itself: every free is GC's, also those its thread runs when it helps the
                // JDK's pending cleaners before growing (26+; counted as explicit before, 1,500-18,000 of 24,000)
                assertThat(c.get("ExplicitFrees")).as("ExplicitFrees, %s", context).isZero();
            }
        }
    }

    /** The verified result line of a finished (or holding) run; fails unless verified=true. */
    private static String verifiedResultLine(ForkedJvm jvm, Sample sample) {
        String line = jvm.awaitStdoutLine(sample.resultPrefix(), Duration.ofSeconds(5));
        assertThat(KeyValues.parse(line)).as("result line of %s\n%s", jvm, jvm.describe())
                .containsEntry("verified", "true");
        return line;
    }

    private static String throughput(ForkedJvm jvm, Sample sample) {
        String line = jvm.awaitStdoutLine(sample.throughputPrefix(), Duration.ofSeconds(5));
        Map<String, String> values = KeyValues.parse(line);
        assertThat(values).as("throughput line of %s", jvm).containsKey(sample.throughputKey);
        return values.get(sample.throughputKey);
    }

    private static double readDouble(JmxClient jmx, String attribute) {
        try {
            return ((Number) jmx.connection().getAttribute(ALLOCATOR, attribute)).doubleValue();
        } catch (JMException | java.io.IOException e) {
            throw new AssertionError("JMX read of " + attribute + " failed: " + e, e);
        }
    }

    /** The key=values of the two {@code [kmem4j] summary:} counter lines. */
    private static Map<String, String> summary(List<String> stderr) {
        Map<String, String> values = new LinkedHashMap<>();
        stderr.stream()
                .filter(l -> l.startsWith("[kmem4j] summary: allocations=") || l.startsWith("[kmem4j] summary: remoteFreesSent="))
                .forEach(l -> values.putAll(KeyValues.parse(l)));
        assertThat(values).as("summary lines on stderr:\n%s", String.join("\n", stderr)).containsKeys("allocations", "remoteFreesSent");
        return values;
    }

    /**
     * The allocator's address-order score (share of consecutive allocations of a thread at ascending
     * addresses) from the summary's per-cache table, weighted by allocations; the MXBean does not
     * expose it. Empty if no cache served anything.
     */
    private static String addressOrder(List<String> stderr) {
        double weighted = 0;
        long allocations = 0;
        for (String line : stderr) {
            Matcher m = CACHE_ROW.matcher(line);
            if (m.matches()) {
                long a = Long.parseLong(m.group(2));
                weighted += a * Double.parseDouble(m.group(6));
                allocations += a;
            }
        }
        return allocations == 0 ? "" : String.format(Locale.ROOT, "%.2f", weighted / allocations);
    }

    private static void assertNoStackTraces(ForkedJvm jvm) {
        List<String> suspicious = jvm.stderrLines().stream()
                .filter(l -> STACK_TRACE_LINE.matcher(l).matches())
                .collect(Collectors.toList());
        assertThat(suspicious).as("exception / error lines on stderr of %s\n%s", jvm, jvm.describe()).isEmpty();
    }
}
