package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Virtual threads (JDK 21+) under the agent: every buffer is served and verified, and the
 * allocator keeps caches for platform threads only — 20,000 virtual threads must not create 20,000
 * thread caches: they are served from their carriers' magazines. When the tasks release their
 * buffers (as servers do), at least 95% of allocations are magazine hits, taken without a lock.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class VirtualThreadsIT {
    private static final String APP = "io.kmem4j.it.apps.VirtualThreadsApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void virtualThreadsShareTheirCarriersCachesAndEveryBufferIsRight(final Jdk jdk) {
        final Map<String, String> summary = run(jdk, "drop", 80_000);
        assertThat(Integer.parseInt(summary.get("threadCaches"))).as("thread caches (platform threads only): %s", summary)
            .isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors() + 8);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void virtualThreadsThatReleaseTheirBuffersHitTheirCarriersMagazines(final Jdk jdk) {
        final Map<String, String> summary = run(jdk, "release", 320_000);
        assertThat(Double.parseDouble(summary.get("magazineHitRate").replace("%", "")))
            .as("magazine hit rate of virtual threads releasing their buffers: %s", summary).isGreaterThanOrEqualTo(95.0);
        assertThat(Long.parseLong(summary.get("frees"))).as("frees: %s", summary).isEqualTo(320_000);
    }

    private static Map<String, String> run(final Jdk jdk, final String mode, final long buffers) {
        Assumptions.assumeTrue(jdk.feature() >= 21, "virtual threads need JDK 21+, this is " + jdk.version());
        final AppRun run = AppRun.run(jdk, "virtual-threads-" + mode + "-" + jdk.label(),
            List.of(AppRun.javaagent("summary=true")), AppRun.classpath(AppRun.appClasses()), APP,
            Duration.ofSeconds(150), mode);
        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.stdoutLine("virtual-threads: ")).as("result line\n%s", run.description())
            .hasValue("virtual-threads: ok tasks=" + buffers / 4 + " bad=0");
        final Map<String, String> summary = run.summaryCounters();
        System.out.println(TestJdks.LOG_PREFIX + "virtual threads (" + mode + ") on JDK " + jdk.version() + ": " + summary);
        assertThat(Long.parseLong(summary.get("allocations"))).as("allocations served by slabs: %s", summary)
            .isGreaterThanOrEqualTo(buffers);
        // (JDK 24+ warns about the release mode's sun.misc.Unsafe.invokeCleaner: the program's, not kmem4j's)
        assertThat(run.stderr().stream().filter(l -> !l.startsWith(AppRun.AGENT_PREFIX))
            .filter(l -> !(l.startsWith("WARNING: ") && l.contains("sun.misc.Unsafe")) && !l.startsWith("WARNING: Please consider"))
            .toList()).as("stderr lines not from the agent\n%s", run.description()).isEmpty();
        return summary;
    }
}
