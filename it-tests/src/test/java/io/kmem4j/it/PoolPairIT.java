package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A user-declared pool pair ({@code pools=io.kmem4j.it.apps.UserPool#take(int)/...#give(java.nio.ByteBuffer)})
 * in a forked {@code io.kmem4j.it.apps.PoolApp} on each JDK, with a java agent in front of kmem4j
 * ({@code io.kmem4j.it.apps.EarlyAgent}) that loads the pool class and an {@code allocateDirect}
 * caller before kmem4j's premain, so both must be served by retransformation. Also: a second copy of
 * the pool in a child-first class loader is served; a declared pool whose release has no buffer
 * parameter ({@code BadPool}) is left alone with one WARN line naming it; foreign buffers given to
 * the pool reach its own code; a slice of a kmem4j buffer is refused; the bridge class
 * {@code java.nio.Kmem4jBridge} holds only JDK-typed fields and one method.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PoolPairIT {
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final String APP = "io.kmem4j.it.apps.PoolApp";
    static final String POOLS = "io.kmem4j.it.apps.UserPool#take(int)/io.kmem4j.it.apps.UserPool#give(java.nio.ByteBuffer);"
            + "io.kmem4j.it.apps.BadPool#take(int)/io.kmem4j.it.apps.BadPool#give(java.lang.String)";
    private static final String[] POOL_COUNTERS = {
        "PoolAllocations", "PoolAllocationsPassed", "PoolReleases", "PoolReleasesPassed", "RewrittenMethods",
        "PoolsLeftAlone", "Failures",
    };

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void aDeclaredPoolIsServedInEveryLoaderEvenWhenLoadedBeforeKmem4j(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        AppRun plain = AppRun.run(jdk, "pool-plain-" + jdk.label(), List.of(), cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain).contains(
                "pool: takes=2000 verified=true own-takes=2000 own-gives=1999 pooled=1999",
                "pool: child-first own-takes=100", "pool: foreign slice accepted own-gives+1", "pool: ok");

        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "pool-agent-" + jdk.label())
                .jvmArgs("-javaagent:" + earlyAgentJar(), AppRun.javaagent("pools=" + POOLS))
                .mainClass(cp, APP).programArgs("--hold").start()) {
            jvm.awaitStdoutLine("pool: holding", RUN_TIMEOUT);
            List<String> out = jvm.stdoutLines();
            assertThat(out).as("stdout of %s\n%s", jvm, jvm.describe()).contains(
                    "pool: loaded-before-kmem4j=UserPool,EarlyCaller",
                    // 1500 of 2000 takes are in the window (100 B, 4 KiB, 64 KiB): kmem4j's; 200 000 B: the pool's
                    "pool: takes=2000 verified=true own-takes=500 own-gives=500 pooled=500",
                    "pool: foreign heap own-gives+1",
                    "pool: foreign jdk-direct own-gives+1",
                    "pool: foreign slice IllegalArgumentException: duplicate or slice own-gives+0",
                    "pool: child-first own-takes=0",
                    "pool: bad-pool own-takes=10",
                    "pool: early-caller allocations-delta=1000",
                    "pool: bridge fields=[public static volatile java.lang.Object cleanerMark,"
                            + " public static volatile java.util.function.BiConsumer resized,"
                            + " public static volatile java.util.function.BiFunction nettyBuffer,"
                            + " public static volatile java.util.function.BiFunction resize,"
                            + " public static volatile java.util.function.IntFunction allocator,"
                            + " public static volatile java.util.function.LongFunction explicit,"
                            + " public static volatile java.util.function.Predicate release,"
                            + " public static volatile java.util.function.Predicate releaseThenOriginal,"
                            + " public static volatile java.util.function.UnaryOperator bufferPools]"
                            // the bridge's two methods: JDK types only (allocateDirect: ByteBuffer.allocateDirect's body)
                            + " methods=[public static java.nio.ByteBuffer allocateDirect,"
                            + " public static java.nio.ByteBuffer allocateDirectJdk]",
                    "pool: ok");
            List<String> warnings = jvm.stderrLines().stream().filter(l -> l.startsWith("[kmem4j] WARN"))
                    .collect(Collectors.toList());
            assertThat(warnings).as("WARN lines of %s\n%s", jvm, jvm.describe()).hasSize(1);
            assertThat(warnings.get(0)).contains("BadPool#give(java.lang.String)").contains("left alone");
            assertThat(jvm.stderrLines()).as("JVM warnings (e.g. sun.misc.Unsafe on JDK 24+) on stderr of %s", jvm)
                    .noneMatch(l -> l.startsWith("WARNING:"));

            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, Duration.ofSeconds(30))) {
                ObjectName pools = new ObjectName("kmem4j:type=Pools");
                jmx.awaitRegistered(pools, Duration.ofSeconds(10));
                Map<String, Long> c = jmx.readLongs(pools, POOL_COUNTERS);
                System.out.println(TestJdks.LOG_PREFIX + "UserPool on JDK " + jdk.version() + ": " + c);
                // 1500 in-window takes + 100 takes of the child-first copy
                assertThat(c.get("PoolAllocations")).as("%s", c).isEqualTo(1600);
                assertThat(c.get("PoolAllocationsPassed")).as("%s", c).isEqualTo(500);
                assertThat(c.get("PoolReleases")).as("every kmem4j buffer given back, %s", c).isEqualTo(1600);
                // 500 of the pool's own, a heap and a JDK direct buffer
                assertThat(c.get("PoolReleasesPassed")).as("%s", c).isEqualTo(502);
                assertThat(c.get("RewrittenMethods")).as("take and give, in two loaders, %s", c).isEqualTo(4);
                assertThat(c.get("PoolsLeftAlone")).as("BadPool, %s", c).isEqualTo(1);
                assertThat(c.get("Failures")).as("%s", c).isZero();
            } catch (javax.management.MalformedObjectNameException e) {
                throw new IllegalStateException(e);
            }
            jvm.closeStdin();
            assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
        }
    }

    /** A jar holding only a manifest naming {@code io.kmem4j.it.apps.EarlyAgent} (found on the class path). */
    static Path earlyAgentJar() {
        Path jar = Path.of("target", "early-agent.jar").toAbsolutePath();
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(new Attributes.Name("Premain-Class"), "io.kmem4j.it.apps.EarlyAgent");
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out, m)) {
            j.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return jar;
    }
}
