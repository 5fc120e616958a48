package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code ByteBuffer.allocateDirect} contract (DESIGN.md, "Contracts a returned buffer keeps") for
 * every size around every size-class boundary, 0 and 65537: {@code apps.ConformanceApp} must pass and
 * print exactly the same on the plain JDK, with the agent, and with the agent in debug mode (freed
 * memory poisoned), and with the agent its buffers must really come from the slabs (allocations &gt; 0)
 * and the sizes it does not serve must go to the JDK (fallbacks &gt; 0: 0 and 65537).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ConformanceIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final String APP = "io.kmem4j.it.apps.ConformanceApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void allocateDirectKeepsItsContractWithTheAgent(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());

        AppRun plain = AppRun.run(jdk, "conformance-plain-" + jdk.label(), List.of(), cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s (the plain JDK must pass its own contract)\n%s", plain,
                plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain)
                .anyMatch(l -> l.startsWith("conformance: ok checks="))
                .contains("conformance: invokeCleaner on a view -> java.lang.IllegalArgumentException: duplicate or slice")
                .noneMatch(l -> l.contains("FAIL"));

        AppRun agent = AppRun.run(jdk, "conformance-agent-" + jdk.label(), List.of(AppRun.javaagent("summary=true")),
                cp, APP, RUN_TIMEOUT);
        assertThat(agent.exit()).as("exit code of %s\n%s", agent, agent.description()).isZero();
        assertThat(agent.stdout()).as("stdout of ConformanceApp with the agent vs. without (%s)\n%s", plain,
                agent.description()).containsExactlyElementsOf(plain.stdout());
        Map<String, String> summary = agent.summaryCounters();
        long allocations = count(summary, "allocations");
        long frees = count(summary, "frees");
        long fallbacks = count(summary, "fallbacks");
        long live = count(summary, "live");
        System.out.println(TestJdks.LOG_PREFIX + "Conformance JDK " + jdk.version() + ": "
                + agent.stdoutLine("conformance: ok").orElse("?") + "; agent summary allocations=" + allocations
                + " frees=" + frees + " live=" + live + " fallbacks=" + fallbacks + " bytesReserved="
                + summary.get("bytesReserved"));
        assertThat(allocations).as("slab allocations in the summary of %s: %s", agent, summary).isPositive();
        assertThat(fallbacks).as("fallbacks (sizes 0 and 65537) in the summary of %s: %s", agent, summary).isPositive();
        assertThat(frees).as("every slab buffer was released with invokeCleaner (frees == allocations) in %s: %s",
                agent, summary).isEqualTo(allocations);
        assertThat(live).as("live buffers at exit of %s: %s", agent, summary).isZero();
        assertThat(agent.stderrStartingWith("WARNING:")).as("the JDK's own WARNING lines (sun.misc.Unsafe on 24+)"
                + " with the agent vs. without: the agent adds none\n%s", agent.description())
                .containsExactlyElementsOf(plain.stderrStartingWith("WARNING:"));

        AppRun debug = AppRun.run(jdk, "conformance-debug-" + jdk.label(),
                List.of("-Dkmem4j.debug=true", AppRun.javaagent("summary=true")), cp, APP, RUN_TIMEOUT);
        assertThat(debug.exit()).as("exit code of %s\n%s", debug, debug.description()).isZero();
        assertThat(debug.stdout()).as("stdout with the agent in debug mode vs. without (%s)\n%s", plain,
                debug.description()).containsExactlyElementsOf(plain.stdout());
        assertThat(count(debug.summaryCounters(), "allocations")).as("slab allocations of %s", debug).isPositive();
        assertThat(debug.stderr().stream().filter(l -> l.contains("Exception") || l.startsWith("[kmem4j] WARN")
                || l.startsWith("[kmem4j] ERROR")).collect(Collectors.toList()))
                .as("exceptions or agent warnings on stderr of %s\n%s", debug, debug.description()).isEmpty();
    }

    /** A summary value as a number: {@code "649,"} (from {@code (explicit=649,}) is 649. */
    static long count(Map<String, String> summary, String key) {
        String v = summary.get(key);
        assertThat(v).as("'%s' in summary %s", key, summary).isNotNull();
        return Long.parseLong(v.replaceAll("[^0-9-]", ""));
    }
}
