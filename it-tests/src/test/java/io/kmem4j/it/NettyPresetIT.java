package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Netty 4.1 ({@code 4.1.137.Final}) and 4.2 ({@code 4.2.18.Final}) echo servers
 * ({@code io.kmem4j.it.apps.NettyEchoApp}) in forked JVMs on each JDK, each Netty version from its
 * own folder ({@code target/netty-4.1}, {@code target/netty-4.2}, filled by maven-dependency-plugin),
 * in two modes:
 * <ul>
 *   <li>{@link Mode#UNPOOLED}: {@code -Dio.netty.allocator.type=unpooled}; Netty's direct buffers
 *       come from {@code ByteBuffer.allocateDirect} and reach kmem4j there (on JDK 25 Netty 4.2 frees
 *       them by GC only);</li>
 *   <li>{@link Mode#PRESET}: the agent's {@code presets=netty}, with Netty's reflective access
 *       ({@code -Dio.netty.tryReflectionSetAccessible=true}, {@code --add-opens
 *       java.base/java.nio=ALL-UNNAMED}; Netty 4.2 on JDK 24+ also {@code -Dio.netty.noUnsafe=false})
 *       so that Netty uses its "no cleaner" buffers, which kmem4j serves from its explicit flavour.</li>
 * </ul>
 * Each case runs once without the agent and once with it (holding after the run): the echoed bytes
 * must be the same, the release of foreign buffers must behave as without the agent, the JMX counters
 * ({@code kmem4j:type=Allocator}, {@code kmem4j:type=Pools}) must show what was routed, Netty's own
 * direct-memory counter must end where it started, and after GC the memory must be back.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NettyPresetIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MBEAN_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(20);
    private static final String APP = "io.kmem4j.it.apps.NettyEchoApp";
    private static final ObjectName POOLS = pools();
    /** As in SamplesAgentIT: Netty's few start-up buffers and the JDK's per-thread temporary buffers. */
    private static final long BYTES_IN_USE_BOUND = 64 * 1024;
    private static final long LIVE_BUFFERS_BOUND = 16;
    /** Client messages of at most 64 KiB: 4 connections x 200 messages, 5 of 6 sizes in the window. */
    private static final long IN_WINDOW_MESSAGES = 4 * 200 * 5 / 6;

    private static final String[] ALLOCATOR = {
        "Allocations", "Frees", "ExplicitFrees", "GcFrees", "LiveBuffers", "BytesInUse", "Fallbacks", "DoubleFrees",
    };
    private static final String[] POOL_COUNTERS = {
        "PoolAllocations", "PoolAllocationsPassed", "PoolReleases", "PoolReleasesPassed", "PoolResizes",
        "PoolResizesPassed", "RewrittenMethods", "PoolsLeftAlone", "Failures",
    };
    private static final Pattern STACK_TRACE_LINE =
            Pattern.compile(".*(Exception|Error:).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*");

    enum Mode { UNPOOLED, PRESET }

    static Stream<Arguments> cases() {
        return TestJdks.all().flatMap(jdk -> Stream.of("4.1", "4.2")
                .flatMap(netty -> Stream.of(Mode.values()).map(mode -> Arguments.of(jdk, netty, mode))));
    }

    @ParameterizedTest(name = "Netty {1} {2} on {0}")
    @MethodSource("cases")
    void nettyServesCorrectlyAndTheCountersShowWhatWasRouted(Jdk jdk, String netty, Mode mode) {
        String cp = AppRun.classpath(AppRun.appClasses()) + java.io.File.pathSeparator + nettyJars(netty);
        List<String> flags = new ArrayList<>(List.of("-Dio.netty.allocator.type=unpooled"));
        if (mode == Mode.PRESET) {
            flags.addAll(List.of("-Dio.netty.tryReflectionSetAccessible=true", "--add-opens=java.base/java.nio=ALL-UNNAMED"));
            if (netty.equals("4.2") && jdk.feature() >= 24) {
                flags.add("-Dio.netty.noUnsafe=false"); // Netty 4.2 leaves sun.misc.Unsafe alone on JDK 24+ by default
            }
        }
        String label = "netty" + netty + "-" + mode.name().toLowerCase(java.util.Locale.ROOT) + "-" + jdk.label();

        AppRun plain = AppRun.run(jdk, label + "-plain", flags, cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain).contains("netty: ok");
        assertThat(plain.stdoutLine("netty: version=").orElseThrow()).contains("version=" + netty + ".")
                .contains("noCleaner=" + (mode == Mode.PRESET));

        List<String> agentFlags = new ArrayList<>(flags);
        agentFlags.add(AppRun.javaagent(mode == Mode.PRESET ? "presets=netty" : null));
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, label + "-agent").jvmArgs(agentFlags).mainClass(cp, APP)
                .programArgs(mode == Mode.PRESET ? new String[] {"--hold", "--preset-checks"} : new String[] {"--hold"})
                .start()) {
            jvm.awaitStdoutLine("netty: holding", RUN_TIMEOUT);
            List<String> out = jvm.stdoutLines();
            assertThat(out).as("stdout of %s\n%s", jvm, jvm.describe()).contains("netty: ok");
            assertThat(line(out, "netty: echo ok")).as("echoed bytes and crc with the agent vs. without")
                    .isEqualTo(plain.stdoutLine("netty: echo ok").orElseThrow());
            assertThat(line(out, "netty: expand ok")).isEqualTo("netty: expand ok capacity=262144");
            assertForeignReleases(plain.stdout(), out, mode);
            Map<String, Long> used = KeyValues.parse(line(out, "netty: used-direct-memory")).entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> Long.parseLong(e.getValue())));
            assertThat(used.get("end")).as("Netty's own direct-memory counter ends where it started (%s)", used)
                    .isEqualTo(used.get("start"));

            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(JmxClient.ALLOCATOR, MBEAN_TIMEOUT);
                Map<String, Long> allocator = jmx.readLongs(JmxClient.ALLOCATOR, ALLOCATOR);
                Map<String, Long> pools = mode == Mode.PRESET ? jmx.readLongs(POOLS, POOL_COUNTERS) : Map.of();
                if (mode == Mode.UNPOOLED) {
                    assertThat(jmx.isRegistered(POOLS)).as("no Pools bean without presets/pools/excludeCallers").isFalse();
                    assertThat(allocator.get("Allocations")).as("Netty's buffers through allocateDirect, %s", allocator)
                            .isGreaterThanOrEqualTo(IN_WINDOW_MESSAGES);
                } else {
                    assertPresetCounters(netty, allocator, pools);
                }
                Map<String, Long> after = awaitMemoryBack(jmx, jvm + " on " + jdk);
                System.out.println(TestJdks.LOG_PREFIX + "Netty " + netty + " " + mode + " JDK " + jdk.version()
                        + ": allocator=" + allocator + (pools.isEmpty() ? "" : " pools=" + pools)
                        + " afterGc=" + after + " nettyUsedDirectMemory=" + used);
            }
            jvm.closeStdin();
            assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
            assertThat(jvm.stderrLines().stream().filter(l -> STACK_TRACE_LINE.matcher(l).matches())
                    .collect(Collectors.toList())).as("exception lines on stderr of %s\n%s", jvm, jvm.describe())
                    .isEmpty();
        }
    }

    /** Netty's no-cleaner allocations and releases all went through kmem4j's explicit flavour. */
    private static void assertPresetCounters(String netty, Map<String, Long> allocator, Map<String, Long> pools) {
        assertThat(pools.get("RewrittenMethods")).as("methods of the fitting pool, %s", pools)
                .isEqualTo(netty.equals("4.1") ? 4 : 5);
        assertThat(pools.get("PoolsLeftAlone")).as("the other Netty line's pool, %s", pools).isEqualTo(1);
        assertThat(pools.get("Failures")).as("failures, %s", pools).isZero();
        assertThat(pools.get("PoolAllocations")).as("no-cleaner buffers served by kmem4j, %s", pools)
                .isGreaterThanOrEqualTo(IN_WINDOW_MESSAGES);
        assertThat(pools.get("PoolAllocationsPassed")).as("100 000-byte messages stay Netty's own, %s", pools)
                .isPositive();
        assertThat(pools.get("PoolResizes")).as("the expanding buffer, %s", pools).isPositive();
        // every served buffer came back, through a release (or as the old half of a resize); the
        // 4 KiB buffer of the preset checks went back through the preset's release too
        assertThat(pools.get("PoolReleases") + pools.get("PoolResizes")).as("kmem4j buffers released, %s", pools)
                .isGreaterThanOrEqualTo(pools.get("PoolAllocations"));
        assertThat(allocator.get("DoubleFrees")).as("double frees, %s", allocator).isZero();
    }

    /** Foreign buffers handed to Netty's release behave as without the agent; kmem4j's are released once. */
    private static void assertForeignReleases(List<String> plain, List<String> agent, Mode mode) {
        for (String same : List.of("netty: foreign heap ", "netty: foreign jdk-direct-1MiB ")) {
            assertThat(line(agent, same)).as("outcome of %s with the agent vs. without", same)
                    .isEqualTo(line(plain, same));
        }
        assertThat(line(agent, "netty: foreign slice ")).as("a slice is refused, nothing freed")
                .matches("netty: foreign slice (IllegalArgumentException|UnsupportedOperationException): .*");
        if (mode == Mode.PRESET) {
            // the 4 KiB buffer is kmem4j's: freeDirectBuffer releases it once, the second call is a no-op
            assertThat(line(agent, "netty: foreign direct-4KiB ")).isEqualTo("netty: foreign direct-4KiB ok");
            assertThat(line(agent, "netty: foreign direct-4KiB-again ")).isEqualTo("netty: foreign direct-4KiB-again ok");
            assertThat(line(agent, "netty: foreign preset slice "))
                    .isEqualTo("netty: foreign preset slice IllegalArgumentException: duplicate or slice");
            assertThat(line(agent, "netty: foreign preset root ")).isEqualTo("netty: foreign preset root ok");
        } else {
            for (String same : List.of("netty: foreign direct-4KiB ", "netty: foreign direct-4KiB-again ")) {
                assertThat(line(agent, same)).isEqualTo(line(plain, same));
            }
        }
    }

    private static Map<String, Long> awaitMemoryBack(JmxClient jmx, String target) {
        await("kmem4j memory back after the Netty run in " + target).atMost(SETTLE_TIMEOUT)
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(200)).pollInSameThread()
                .untilAsserted(() -> {
                    jmx.gc();
                    Map<String, Long> now = jmx.readLongs(JmxClient.ALLOCATOR, ALLOCATOR);
                    assertThat(now.get("BytesInUse")).as("BytesInUse after GC, %s", now)
                            .isLessThanOrEqualTo(BYTES_IN_USE_BOUND);
                    assertThat(now.get("LiveBuffers")).as("LiveBuffers after GC, %s", now)
                            .isLessThanOrEqualTo(LIVE_BUFFERS_BOUND);
                    assertThat(now.get("Allocations") - now.get("Frees")).as("Allocations - Frees, %s", now)
                            .isEqualTo(now.get("LiveBuffers"));
                });
        return jmx.readLongs(JmxClient.ALLOCATOR, ALLOCATOR);
    }

    private static String line(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no line '" + prefix + "...' in " + lines));
    }

    private static ObjectName pools() {
        try {
            return new ObjectName("kmem4j:type=Pools");
        } catch (javax.management.MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The jars of one Netty version, copied by maven-dependency-plugin before the integration tests. */
    static String nettyJars(String version) {
        return Artifacts.copiedJars("netty-" + version);
    }
}
