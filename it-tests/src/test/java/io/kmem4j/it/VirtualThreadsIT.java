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
 * thread caches (they share one tier).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class VirtualThreadsIT {
    private static final String APP = "io.kmem4j.it.apps.VirtualThreadsApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void virtualThreadsShareOneTierAndEveryBufferIsRight(final Jdk jdk) {
        Assumptions.assumeTrue(jdk.feature() >= 21, "virtual threads need JDK 21+, this is " + jdk.version());
        final AppRun run = AppRun.run(jdk, "virtual-threads-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
            AppRun.classpath(AppRun.appClasses()), APP, Duration.ofSeconds(150));
        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.stdoutLine("virtual-threads: ")).as("result line\n%s", run.description())
            .hasValue("virtual-threads: ok tasks=20000 bad=0");
        final Map<String, String> summary = run.summaryCounters();
        System.out.println(TestJdks.LOG_PREFIX + "virtual threads on JDK " + jdk.version() + ": " + summary);
        assertThat(Long.parseLong(summary.get("allocations"))).as("allocations served by slabs: %s", summary)
            .isGreaterThanOrEqualTo(4L * 20_000);
        assertThat(Integer.parseInt(summary.get("threadCaches"))).as("thread caches (platform threads only): %s", summary)
            .isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors() + 8);
        assertThat(run.stderr().stream().filter(l -> !l.startsWith(AppRun.AGENT_PREFIX)).toList())
            .as("stderr lines not from the agent\n%s", run.description()).isEmpty();
    }
}
