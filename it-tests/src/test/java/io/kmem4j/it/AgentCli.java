package io.kmem4j.it;

import java.time.Duration;
import java.util.List;

/**
 * One finished run of the agent jar's command line ({@code java -jar kmem4j-agent.jar attach|slabtop
 * ...}) in a forked JVM of the given JDK, with stdin closed.
 *
 * @param exit        its exit code
 * @param stdout      all of stdout
 * @param stderr      all of stderr
 * @param description {@link ForkedJvm#describe()}, for failure messages
 */
record AgentCli(int exit, List<String> stdout, List<String> stderr, String description) {

    /** Every command finishes in seconds; this bounds a hang. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Runs the command line with {@code args} and waits for it (at most {@link #TIMEOUT}). */
    static AgentCli run(Jdk jdk, String name, String... args) {
        try (ForkedJvm cli = ForkedJvm.builder(jdk, name + "-" + jdk.label())
                .jar(Artifacts.agentJar())
                .programArgs(args)
                .start()) {
            cli.closeStdin();
            int exit = cli.waitForExit(TIMEOUT);
            return new AgentCli(exit, cli.stdoutLines(), cli.stderrLines(), cli.describe());
        }
    }
}
