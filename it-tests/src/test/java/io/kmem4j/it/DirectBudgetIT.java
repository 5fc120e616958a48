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
 * Start-up I/O that costs the application nothing (issue 16, part 3): under
 * {@code -XX:MaxDirectMemorySize=10} ({@link io.kmem4j.it.apps.DirectBudgetApp}, which allocates no
 * direct memory) the agent's beans register on every JDK, its log has no WARN, and the JDK's
 * {@code direct} pool shows nothing taken: on JDK 17-23 the platform MBean server's set-up reads the
 * cgroup files through NIO on the agent's thread and so borrows the JDK's temporary direct buffers;
 * they come from outside the budget now ({@code io.kmem4j.agent.bridge.AgentBuffers}). Before, on
 * 17 and 21: {@code WARN JMX registration failed ... OutOfMemoryError: Cannot reserve 8192 bytes of
 * direct buffer memory (allocated: 0, limit: 10)}. Smoke set: every JDK of the matrix.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DirectBudgetIT {

    private static final String APP = "io.kmem4j.it.apps.DirectBudgetApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void theAgentsBeansRegisterUnderATenByteLimitAndTakeNothingOfIt(Jdk jdk) {
        AppRun run = AppRun.run(jdk, "direct-budget-" + jdk.label(),
                List.of("-XX:MaxDirectMemorySize=10", AppRun.javaagent("")),
                AppRun.classpath(AppRun.appClasses()), APP, Duration.ofSeconds(60));

        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.requireLine("registered: ")).isEqualTo("registered: Enabled=true");
        assertThat(run.requireLine("pools: ")).contains("kmem4j");
        Map<String, String> direct = KeyValues.parse(run.requireLine("direct: "));
        assertThat(direct).as("the application's direct-memory budget, after the agent's set-up")
                .isEqualTo(Map.of("count", "0", "used", "0"));
        assertThat(run.stderrStartingWith(AppRun.AGENT_PREFIX)).as("the agent's log").isNotEmpty()
                .allSatisfy(l -> assertThat(l).doesNotContain(" WARN ", " ERROR "));
    }
}
