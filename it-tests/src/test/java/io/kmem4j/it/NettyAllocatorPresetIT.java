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
 * {@code presets=netty-allocator}: Netty 4.1 and 4.2's pooled and adaptive allocators hand out
 * kmem4j's buffers for the sizes kmem4j serves, with no Netty property and no {@code --add-opens},
 * on every JDK, from the class path, and for Netty 4.2 also from the module path (where it is a
 * named module that opens nothing: the agent opens {@code io.netty.buffer} to itself). {@code io.kmem4j.it.apps.NettyAllocatorApp} runs once without the agent and once with
 * it (holding after the run); every line of what the program sees (shapes, growth across the largest
 * class, views, composites, release on another thread) must be the same, except that the 256-byte
 * buffers are kmem4j's and the 300,000-byte ones (above nettyMaxSizeClassBytes) stay Netty's. Then the {@code kmem4j:type=Netty}
 * bean must account for every buffer: each served block came back exactly once, except the ones the
 * program dropped without {@code release()}, which kmem4j's leak detection finds after GC; the blocks
 * come from an allocator of their own ({@code kmem4j:type=Allocator,name=netty} and its caches).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NettyAllocatorPresetIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MBEAN_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);
    private static final String APP = "io.kmem4j.it.apps.NettyAllocatorApp";
    static final ObjectName NETTY = JmxClient.objectName("kmem4j:type=Netty");
    /** The allocator of Netty's buffers, separate from the one behind allocateDirect. */
    static final ObjectName NETTY_ALLOCATOR = JmxClient.objectName("kmem4j:type=Allocator,name=netty");
    private static final ObjectName NETTY_CACHE_1024 =
            JmxClient.objectName("kmem4j:type=SlabCache,allocator=netty,name=kmem4j-1024");
    /** Buffers each allocator's part drops without release (NettyAllocatorApp.DROPPED), two allocators. */
    private static final long DROPPED = 2 * 500;
    /** Buffers each part releases on another thread (NettyAllocatorApp.REMOTE_BUFFERS), two allocators. */
    private static final long REMOTE = 2 * 2000;
    static final String[] NETTY_COUNTERS = {
        "Buffers", "BuffersReused", "BuffersPassed", "Grown", "Releases", "CopiesLeftAlone", "RewrittenMethods",
        "Failures",
    };
    private static final String[] ALLOCATOR = {
        "Allocations", "Frees", "LiveBuffers", "BytesInUse", "DoubleFrees", "LeaksDetected",
    };
    private static final Pattern STACK_TRACE_LINE =
            Pattern.compile(".*(Exception|Error:).*|^\\s+at \\S+\\(.*\\)\\s*$|^Caused by: .*");

    /** Where Netty's jars go: the class path, or the module path (Netty 4.2 is a named module there, opening nothing). */
    enum Path { CLASS_PATH, MODULE_PATH }

    static Stream<Arguments> cases() {
        return Stream.concat(
                TestJdks.all().flatMap(jdk -> Stream.of("4.1", "4.2").map(netty -> Arguments.of(jdk, netty, Path.CLASS_PATH))),
                TestJdks.full().map(jdk -> Arguments.of(jdk, "4.2", Path.MODULE_PATH)));
    }

    @ParameterizedTest(name = "Netty {1} on the {2} on {0}")
    @MethodSource("cases")
    void nettysPooledAndAdaptiveBuffersComeFromKmem4jAndGoBackOnce(Jdk jdk, String netty, Path path) throws Exception {
        String label = "netty-allocator" + netty + (path == Path.MODULE_PATH ? "-modules-" : "-") + jdk.label();
        String cp = AppRun.classpath(AppRun.appClasses());
        List<String> modules = List.of();
        if (path == Path.CLASS_PATH) {
            cp += java.io.File.pathSeparator + NettyPresetIT.nettyJars(netty);
        } else {
            String dir = NettyPresetIT.nettyJars(netty);
            modules = List.of("--module-path", dir.substring(0, dir.length() - 2), "--add-modules", "ALL-MODULE-PATH");
        }
        AppRun plain = AppRun.run(jdk, label + "-plain", modules, cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain).contains("nettyalloc: ok");

        List<String> flags = new ArrayList<>(modules);
        flags.add(AppRun.javaagent("presets=netty-allocator,explicitLeakDetection=true,siteSampleRate=1,summary=true"));
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, label + "-agent").jvmArgs(flags).mainClass(cp, APP)
                .programArgs("--hold").start()) {
            jvm.awaitStdoutLine("nettyalloc: holding", RUN_TIMEOUT);
            List<String> out = jvm.stdoutLines();
            assertThat(out).as("stdout of %s\n%s", jvm, jvm.describe()).contains("nettyalloc: ok");
            assertSameAsWithoutTheAgent(plain.stdout(), out);

            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(NETTY, MBEAN_TIMEOUT);
                Map<String, Long> n = jmx.readLongs(NETTY, NETTY_COUNTERS);
                String copies = java.util.Arrays.toString((String[]) jmx.read(NETTY, "Copies"));
                assertThat(copies).as("the copy of Netty, %s", n).contains("io.netty " + netty + ".")
                        .contains("Kmem4jDirectByteBuf");
                assertThat(n.get("RewrittenMethods")).as("pooled and adaptive newDirectBuffer, %s", n).isEqualTo(2);
                assertThat(n.get("Failures")).as("failures, %s", n).isZero();
                assertThat(n.get("CopiesLeftAlone")).as("copies left alone, %s", n).isZero();
                assertThat(n.get("Buffers")).as("buffers served, %s", n).isGreaterThanOrEqualTo(REMOTE + DROPPED);
                assertThat(n.get("BuffersPassed")).as("the 300,000-byte buffers (above nettyMaxSizeClassBytes) stay Netty's, %s", n)
                        .isGreaterThanOrEqualTo(2);
                assertThat(n.get("Grown")).as("growth to 64 and 128 KiB served by kmem4j, %s", n).isGreaterThanOrEqualTo(4);
                assertThat(n.get("Releases") + DROPPED).as("every served block back once, but the dropped, %s", n)
                        .isEqualTo(n.get("Buffers") + n.get("Grown"));

                jmx.awaitRegistered(NETTY_ALLOCATOR, MBEAN_TIMEOUT);
                assertThat(jmx.readLong(NETTY_CACHE_1024, "Allocations")).as("Netty's 1 KiB blocks in their own cache")
                        .isPositive();
                assertThat((String) jmx.read(NETTY_ALLOCATOR, "Configuration"))
                        .as("the Netty allocator's own largest class, nettyMaxSizeClassBytes' default")
                        .contains(",maxSizeClassBytes=262144,").contains("nettyMaxSizeClassBytes=262144");
                assertThat(n.get("BuffersReused")).as("released buffers served again to their thread, %s", n)
                        .isPositive();
                assertThat(jmx.readLong(NETTY_ALLOCATOR, "Allocations")).as("Netty's blocks in their own allocator, %s", n)
                        .isEqualTo(n.get("Buffers") - n.get("BuffersReused") + n.get("Grown"));
                // a site is the program's code that asked Netty's allocator, not Netty's frames or kmem4j's
                String sites = (String) jmx.connection().invoke(NETTY_ALLOCATOR, "outstandingBySite",
                        new Object[] {3}, new String[] {"int"});
                assertThat(sites).as("Netty buffers by site").contains("io.kmem4j.it.apps.NettyAllocatorApp.")
                        .doesNotContain("io.netty.").doesNotContain("io.kmem4j.agent.").doesNotContain("io.kmem4j.core.");
                Map<String, Long> after = awaitLeaksFound(jmx, jvm + " on " + jdk);
                assertThat(after.get("DoubleFrees")).as("double frees, %s", after).isZero();
                System.out.println(TestJdks.LOG_PREFIX + "Netty " + netty + " netty-allocator JDK " + jdk.version()
                        + ": netty=" + n + " copies=" + copies + " allocatorAfterGc=" + after);
            }
            jvm.closeStdin();
            assertExitsCleanly(jvm, plain);
            // the exit summary's line of the hook's counters: every served block back once, but the dropped
            String line = jvm.stderrLines().stream().filter(l -> l.startsWith("[kmem4j] netty buffers: served="))
                    .findFirst().orElseThrow(() -> new AssertionError("no netty buffers line in\n" + jvm.describe()));
            Map<String, Long> exit = new java.util.HashMap<>();
            for (String kv : line.substring("[kmem4j] netty buffers: ".length()).split(" ")) {
                exit.put(kv.substring(0, kv.indexOf('=')), Long.parseLong(kv.substring(kv.indexOf('=') + 1)));
            }
            assertThat(exit.get("releases") + DROPPED).as("at exit: %s", line)
                    .isEqualTo(exit.get("served") + exit.get("grown"));
            assertThat(exit.get("reused")).as("at exit: %s", line).isPositive();
            assertThat(exit.get("failures")).as("at exit: %s", line).isZero();
        }
    }

    /**
     * The agent's run, its stdin closed, exits 0 in time, with no exception on stderr and the same
     * JDK {@code WARNING:} lines as the run without the agent ({@code plain}).
     */
    static void assertExitsCleanly(ForkedJvm jvm, AppRun plain) {
        assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
        assertThat(jvm.stderrLines().stream().filter(l -> STACK_TRACE_LINE.matcher(l).matches())
                .collect(Collectors.toList())).as("exception lines on stderr of %s\n%s", jvm, jvm.describe())
                .isEmpty();
        assertThat(warnings(jvm.stderrLines())).as("the JDK's warnings with the agent vs. without")
                .isEqualTo(warnings(plain.stderr()));
    }

    /** Every line but the served ones is the same; there the small buffer is kmem4j's and the large one Netty's. */
    private static void assertSameAsWithoutTheAgent(List<String> plain, List<String> agent) {
        List<String> plainRest = new ArrayList<>();
        List<String> agentRest = new ArrayList<>();
        for (String l : plain) {
            if (l.contains(" served ")) {
                String large = l.substring(l.indexOf(" 300000="));
                String agentLine = agent.stream().filter(a -> a.startsWith(l.substring(0, l.indexOf(" served "))
                        + " served ")).findFirst().orElseThrow(() -> new AssertionError("no served line for " + l));
                assertThat(agentLine).as("the 256- and 200,000-byte buffers are kmem4j's, the 300,000-byte one Netty's")
                        .contains(" 256=Kmem4jDirectByteBuf ").contains(" 200000=Kmem4jDirectByteBuf ").endsWith(large);
            } else {
                plainRest.add(l);
            }
        }
        agent.stream().filter(l -> !l.contains(" served ") && !l.equals("nettyalloc: holding")).forEach(agentRest::add);
        assertThat(agentRest).as("what the program sees with the agent vs. without").isEqualTo(plainRest);
    }

    /** The dropped buffers' blocks come back through kmem4j's leak detection after GC. */
    private static Map<String, Long> awaitLeaksFound(JmxClient jmx, String target) {
        await("kmem4j's leak detection finds the dropped Netty buffers in " + target).atMost(SETTLE_TIMEOUT)
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(300)).pollInSameThread()
                .untilAsserted(() -> {
                    jmx.gc();
                    Map<String, Long> now = jmx.readLongs(NETTY_ALLOCATOR, ALLOCATOR);
                    assertThat(now.get("LeaksDetected")).as("LeaksDetected after GC, %s", now)
                            .isGreaterThanOrEqualTo(DROPPED);
                    assertThat(now.get("LiveBuffers")).as("LiveBuffers after GC, %s", now).isLessThanOrEqualTo(16);
                });
        return jmx.readLongs(NETTY_ALLOCATOR, ALLOCATOR);
    }

    private static List<String> warnings(List<String> stderr) {
        return stderr.stream().filter(l -> l.startsWith("WARNING:")).collect(Collectors.toList());
    }
}
