package io.kmem4j.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.kmem4j.it.apps.FirstAllocationApp;
import io.kmem4j.it.apps.HelloApp;
import io.kmem4j.it.apps.LargeBuffersApp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The agent builds its allocator at the first direct allocation, not in premain: a program that
 * allocates none loads none of the allocator's classes and starts no thread of kmem4j's, and one
 * whose first allocations come from several threads at once has every one of them served by kmem4j,
 * and the thread kmem4j starts then inherits nothing of the application thread that started it. A
 * program whose buffers are all larger than the largest size class gets no allocator either.
 */
class LazyAllocatorIT {
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    /** Classes only a built allocator loads (the JDK probe at start loads SlabAllocator and JdkInternals). */
    private static final List<String> BUILT_ONLY = List.of("io.kmem4j.core.ThreadRegistry ", "io.kmem4j.core.Reaper ",
            "io.kmem4j.core.PageHeap ", "io.kmem4j.core.ThreadCache ",
            // no bytecode library before the build: ByteBuffer's rewrite and the bridge need none (start-up)
            "io.kmem4j.shaded.net.bytebuddy.");

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void aProgramThatAllocatesNoDirectBufferGetsNoAllocator(Jdk jdk) {
        AppRun run = runWithClassLog(jdk, "lazy-hello-", HelloApp.class);

        assertThat(run.stdout()).as("the program's own line, %s", run).contains("hello");
        assertNothingBuilt(run);
    }

    /** Runs {@code app} under the agent with {@code summary=true}, logging every class loaded to stdout. */
    private static AppRun runWithClassLog(Jdk jdk, String name, Class<?> app) {
        AppRun run = AppRun.run(jdk, name + jdk.label(),
                List.of(AppRun.javaagent("summary=true"), "-Xlog:class+load=info:stdout"),
                AppRun.classpath(AppRun.appClasses()), app.getName(), RUN_TIMEOUT);
        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        return run;
    }

    /** The agent was there (its lazy allocator loaded) and built nothing: no allocator class, nothing counted, no warning. */
    private static void assertNothingBuilt(AppRun run) {
        assertThat(run.stdout()).as("classes loaded (-Xlog:class+load), %s", run)
                .anyMatch(l -> l.contains("io.kmem4j.agent.bridge.LazyAllocator "))
                .noneMatch(l -> BUILT_ONLY.stream().anyMatch(l::contains));
        assertThat(run.summaryAllocations()).isZero();
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("kmem4j's lines, %s", run)
                .noneMatch(l -> l.contains(" WARN ") || l.contains(" ERROR "));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void firstAllocationsFromSeveralThreadsAtOnceAreServed(Jdk jdk) {
        AppRun run = AppRun.run(jdk, "lazy-first-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
                AppRun.classpath(AppRun.appClasses()), FirstAllocationApp.class.getName(), RUN_TIMEOUT);

        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.requireLine("first-allocations: ")).isEqualTo("first-allocations: buffers=5 direct=5");
        assertThat(run.requireLine("reaper: ")).as("the reaper thread inherits nothing of the allocating thread")
                .isEqualTo("reaper: group=system contextClassLoader=null priority=5 daemon=true");
        Map<String, String> summary = run.summaryCounters();
        // the racers wait for the build at most one second (then the JDK serves them): on a quiet machine all 4,
        // on a very busy one at least the allocation made after the race
        assertThat(Long.parseLong(summary.get("allocations"))).as("summary of %s", run).isBetween(1L, 5L);
        assertThat(summary).as("summary of %s", run).containsEntry("fallbacks", "0");
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("kmem4j's lines, %s", run)
                .noneMatch(l -> l.contains(" WARN ") || l.contains(" ERROR "));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void aProgramThatAllocatesOnlyBuffersAboveTheLargestSizeClassGetsNoAllocator(Jdk jdk) {
        AppRun run = runWithClassLog(jdk, "lazy-large-", LargeBuffersApp.class);

        assertThat(run.requireLine("large: ")).isEqualTo("large: buffers=10 direct=10 bytes=10485760");
        assertNothingBuilt(run);
    }
}
