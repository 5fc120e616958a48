package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the agent's own work takes of the application's direct-memory budget: nothing. Under
 * {@code -XX:MaxDirectMemorySize=10} ({@link io.kmem4j.it.apps.DirectBudgetApp}, which allocates no
 * direct memory of its own) with and without the agent:
 * <ul>
 *   <li>the agent creates no MBean server by itself (its beans are registered when the platform MBean
 *       server is created by someone who wants it);</li>
 *   <li>the program's own creation of the platform MBean server ends alike with and without the agent
 *       (on JDK 17-23 the JDK's set-up itself needs an 8 KiB temporary direct buffer and fails under
 *       this budget, agent or not; on 24+ it succeeds), and where it succeeds the agent's beans register
 *       on it;</li>
 *   <li>the JDK's {@code direct} pool shows nothing taken, and the agent logs no WARN: the agent's own
 *       threads get their direct buffers from outside the budget ({@code io.kmem4j.agent.bridge.AgentBuffers}).
 *       Before that, on 17 and 21, the agent's registration failed with {@code WARN JMX registration failed
 *       ... OutOfMemoryError: Cannot reserve 8192 bytes of direct buffer memory (allocated: 0, limit: 10)}.</li>
 * </ul>
 * Smoke set: every JDK of the matrix.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DirectBudgetIT {

    private static final String APP = "io.kmem4j.it.apps.DirectBudgetApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void theAgentTakesNothingOfATenByteBudgetAndRegistersWhenThePlatformServerIsCreated(Jdk jdk) {
        AppRun plain = AppRun.run(jdk, "direct-budget-plain-" + jdk.label(), List.of("-XX:MaxDirectMemorySize=10"),
                AppRun.classpath(AppRun.appClasses()), APP, Duration.ofSeconds(60));
        AppRun run = AppRun.run(jdk, "direct-budget-" + jdk.label(),
                List.of("-XX:MaxDirectMemorySize=10", AppRun.javaagent("")),
                AppRun.classpath(AppRun.appClasses()), APP, Duration.ofSeconds(60), "agent");

        for (AppRun r : List.of(plain, run)) {
            assertThat(r.exit()).as("exit code of %s\n%s", r, r.description()).isZero();
            assertThat(KeyValues.parse(r.requireLine("direct: "))).as("the direct-memory budget taken, %s\n%s", r,
                    r.description()).isEqualTo(Map.of("count", "0", "used", "0"));
        }
        assertThat(run.requireLine("servers: ")).as("MBean servers 1.5 s after start, with the agent\n%s",
                run.description()).isEqualTo("servers: 0");
        assertThat(run.requireLine("server: ")).as("the program's own platform MBean server, with the agent as without\n%s",
                run.description()).isEqualTo(plain.requireLine("server: "));
        if (run.requireLine("server: ").equals("server: created")) {
            assertThat(run.requireLine("registered: ")).isEqualTo("registered: Enabled=true");
            assertThat(run.requireLine("pools: ")).contains("kmem4j");
        }
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("the agent's log").isNotEmpty()
                .allSatisfy(l -> assertThat(l).doesNotContain(" WARN ", " ERROR "));
    }
}
