package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.it.apps.Cleaners;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every release path the ecosystem uses releases a kmem4j buffer exactly once, and a second release
 * of the same buffer does nothing, on every JDK of the matrix (smoke set): {@code apps.ReleasePathsApp}
 * with the agent, reading the allocator bean's counters around each release:
 * {@code sun.misc.Unsafe.invokeCleaner}, {@code jdk.internal.misc.Unsafe.invokeCleaner},
 * {@code cleaner().clean()} (its type is {@code jdk.internal.ref.Cleaner} on 17-25 and
 * {@code sun.nio.Cleaner} on 26+), GC (on the "Reference Handler" thread on 17-25, on
 * {@code java.nio.BufferCleaner}'s on 26+, counted as {@code GcFrees}), Netty 4.1's and 4.2's
 * {@code PlatformDependent.freeDirectBuffer}, Agrona's {@code BufferUtil.free} and the JDK's own
 * temporary-buffer cache ({@code sun.nio.ch.Util}, freed as its thread ends; a kmem4j buffer on 17-23,
 * not one on 24+); and views ({@code duplicate}, {@code slice},
 * {@code asReadOnlyBuffer}, {@code asLongBuffer}) keep a dropped root's memory and contents through GC
 * and reuse, a view is refused by {@code invokeCleaner}, and the root is freed once when the views go.
 * With the agent's owned lifecycle (default) these are the JDK cleaners outside the JDK's list, on
 * both families (17-25 and 26+). Without the agent the program must run the same paths cleanly.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ReleasePathsIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final String APP = "io.kmem4j.it.apps.ReleasePathsApp";
    private static final List<String> EXPLICIT_PATHS = List.of("sun.misc.Unsafe.invokeCleaner",
            "jdk.internal.misc.Unsafe.invokeCleaner", "cleaner().clean()", "PlatformDependent.freeDirectBuffer",
            "BufferUtil.free");

    static Stream<Arguments> cases() {
        return TestJdks.all().flatMap(jdk -> Stream.of(Arguments.of(jdk, "4.1"), Arguments.of(jdk, "4.2")));
    }

    @ParameterizedTest(name = "Netty {1} on {0}")
    @MethodSource("cases")
    void everyReleasePathFreesOnceAndASecondReleaseNothing(Jdk jdk, String netty) {
        String cp = AppRun.classpath(AppRun.appClasses(), AppRun.codeSource("org.agrona.BufferUtil"))
                + java.io.File.pathSeparator + NettyPresetIT.nettyJars(netty);
        List<String> flags = new ArrayList<>(Cleaners.cleanerCleanExports(jdk.feature()));
        flags.add("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED");
        if (netty.equals("4.2") && jdk.feature() >= 24) {
            flags.add("-Dio.netty.noUnsafe=false"); // else Netty 4.2 refuses to clean a JDK buffer on 24+
        }
        String label = "release-paths-netty" + netty + "-" + jdk.label();

        AppRun plain = AppRun.run(jdk, label + "-plain", flags, cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s (the JDK alone)\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout().stream().filter(l -> l.startsWith("release-paths: ")))
                .as("every path ran on the JDK alone\n%s", plain.description()).hasSize(EXPLICIT_PATHS.size() + 4);

        List<String> agentFlags = new ArrayList<>(flags);
        agentFlags.add(AppRun.javaagent(null));
        AppRun agent = AppRun.run(jdk, label + "-agent", agentFlags, cp, APP, RUN_TIMEOUT);
        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        List<String> expected = new ArrayList<>();
        for (String path : EXPLICIT_PATHS) {
            expected.add("release-paths: " + path + " served=1 frees=1 explicit=1 gc=0 again=0 againExplicit=0");
        }
        expected.add("release-paths: GC served=1 frees=1 explicit=0 gc=1 again=0 againExplicit=0");
        // the JDK frees its temporary buffer with cleaner().clean() (or invokeCleaner) as the thread ends
        expected.add(jdk.feature() < 24
                ? "release-paths: temporary buffer at thread end served=1 frees=1 explicit=1 gc=0 again=0 againExplicit=0"
                : "release-paths: temporary buffer at thread end served=0 frees=0 explicit=0 gc=0 again=0 againExplicit=0");
        expected.add("release-paths: views gcWhileViewsLive=0 contentsKept=true viewRefused=true gcAfterViewsDropped=1");
        expected.add("release-paths: done doubleFrees=0 interceptorFailures=0");
        assertThat(agent.stdout().stream().filter(l -> l.startsWith("release-paths: ")))
                .as("each path freed its kmem4j buffer once, the second release nothing\n%s", agent.description())
                .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(agent.stderr().stream().filter(l -> l.startsWith("[kmem4j] WARN") || l.startsWith("[kmem4j] ERROR")
                || l.contains("Exception")).collect(Collectors.toList()))
                .as("agent warnings or exceptions on stderr of %s\n%s", agent, agent.description()).isEmpty();
        System.out.println(TestJdks.LOG_PREFIX + "release paths, Netty " + netty + ", JDK " + jdk.version() + ": "
                + agent.stdout().stream().filter(l -> l.startsWith("release-paths: "))
                        .map(l -> l.substring("release-paths: ".length())).collect(Collectors.joining(" | ")));
    }
}
