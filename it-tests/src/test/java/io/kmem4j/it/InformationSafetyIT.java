package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.it.apps.Cleaners;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Information safety (issue #8, part 4) through the agent: {@code apps.ForeignReleaseApp} passes
 * every kind of buffer that is not a live root of {@code allocateDirect} (heap, large and zero-capacity
 * JDK buffers, {@code FileChannel.map} of a file and of 0 bytes, views of a live buffer, a released
 * buffer whose block serves another one) to {@code Unsafe.invokeCleaner} and to
 * {@code cleaner().clean()}, then allocates 1000 buffers with distinct patterns. With the agent
 * (memory zeroed on release, the default, and on allocation) its stdout must be exactly the JDK's
 * alone: the same outcome, exception type and message for each call, no pattern broken, every fresh
 * buffer zero; and the allocator's bean must show a sound pool: no interceptor failure, no double
 * free, every slab buffer released.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class InformationSafetyIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final String APP = "io.kmem4j.it.apps.ForeignReleaseApp";
    private static final String COUNTERS = "info-safety: counters ";
    /** Of the app's 1000 distinct-pattern buffers, those of 1 B..64 KiB (over 900) come from the slabs. */
    private static final long SLAB_ALLOCATIONS_AT_LEAST = 900;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void foreignBuffersBehaveAsWithoutTheAgentAndThePoolStaysSound(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        // the app releases buffers with ((DirectBuffer) b).cleaner().clean(), as older libraries do
        List<String> exports = Cleaners.cleanerCleanExports(jdk.feature());
        AppRun plain = AppRun.run(jdk, "info-safety-plain-" + jdk.label(), exports, cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s (the JDK alone)\n%s", plain, plain.description()).isZero();
        List<String> expected = withoutCounters(plain);
        assertThat(expected).as("stdout of %s", plain).anyMatch(l -> l.startsWith("info-safety: ok kinds=12"))
                .contains("info-safety: slice invokeCleaner -> java.lang.IllegalArgumentException: duplicate or slice")
                .noneMatch(l -> l.contains("FAIL"));

        for (String options : List.of("summary=true", "summary=true,zeroOnFree=false")) {
            List<String> flags = new java.util.ArrayList<>(exports);
            flags.add(AppRun.javaagent(options));
            String name = "info-safety-agent-" + (options.contains("zeroOnFree") ? "zeroOnAllocation-" : "") + jdk.label();
            AppRun agent = AppRun.run(jdk, name, flags, cp, APP, RUN_TIMEOUT);
            assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
            assertThat(withoutCounters(agent)).as("stdout of %s vs. the JDK alone (%s)\n%s", agent, plain,
                    agent.description()).containsExactlyElementsOf(expected);
            Map<String, String> c = KeyValues.parse(agent.stdoutLine(COUNTERS).orElseThrow(
                    () -> new AssertionError("no counters line\n" + agent.description())));
            assertThat(c).as("allocator bean figures of %s\n%s", agent, agent.description())
                    .containsKeys("Allocations", "Frees", "LiveBuffers", "DoubleFrees", "InterceptorFailures");
            System.out.println(TestJdks.LOG_PREFIX + "InformationSafety JDK " + jdk.version() + " (" + options + "): "
                    + agent.stdoutLine("info-safety: ok").orElse("?") + "; " + agent.stdoutLine(COUNTERS).get());
            assertThat(Long.parseLong(c.get("Allocations"))).as("slab allocations (distinct patterns etc.): %s", c)
                    .isGreaterThanOrEqualTo(SLAB_ALLOCATIONS_AT_LEAST);
            assertThat(c.get("InterceptorFailures")).as("interceptor failures: %s", c).isEqualTo("0");
            assertThat(c.get("DoubleFrees")).as("double frees counted: %s", c).isEqualTo("0");
            assertThat(c.get("LiveBuffers")).as("every slab buffer released: %s", c).isEqualTo("0");
            assertThat(c.get("Frees")).as("frees == allocations: %s", c).isEqualTo(c.get("Allocations"));
            assertThat(agent.stderr().stream().filter(l -> l.startsWith("[kmem4j] WARN") || l.startsWith("[kmem4j] ERROR"))
                    .collect(Collectors.toList())).as("agent warnings of %s", agent).isEmpty();
        }
    }

    private static List<String> withoutCounters(AppRun run) {
        return run.stdout().stream().filter(l -> !l.startsWith(COUNTERS)).collect(Collectors.toList());
    }
}
