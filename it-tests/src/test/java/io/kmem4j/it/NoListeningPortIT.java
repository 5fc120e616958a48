package io.kmem4j.it;

import static io.kmem4j.it.JmxClient.ALLOCATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent opens no port (issue 8, part 7): {@code io.kmem4j.it.apps.HoldingApp} runs with the agent
 * (default configuration; its MXBeans registered, buffers served) and without it as the control;
 * their sockets are read from {@code /proc} ({@link ProcSockets}). Neither listens on TCP, UDP or a
 * Unix socket.
 *
 * <p>Then both are connected to over JMX the way jconsole, {@code kmem4j-agent.jar slabtop} and
 * {@code attach} do (Attach API, {@code startLocalManagementAgent()}): the JDK then listens for its
 * local JMX connector (and for the Attach API), the same with and without kmem4j; that is the JDK's
 * local management agent, started by the tool, not by kmem4j.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NoListeningPortIT {

    private static final String APP = "io.kmem4j.it.apps.HoldingApp";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void theAgentOpensNoListeningSocket(Jdk jdk) {
        assumeTrue(ProcSockets.supported(), "needs Linux /proc/<pid>/net");
        try (ForkedJvm plain = start(jdk, "ports-plain-", List.of());
             ForkedJvm agent = start(jdk, "ports-agent-", List.of(AppRun.javaagent(null)))) {
            plain.awaitStdoutLine("holding: ready beans=false", TIMEOUT);
            agent.awaitStdoutLine("holding: ready beans=true", TIMEOUT);

            List<ProcSockets.Socket> plainSockets = ProcSockets.of(plain.pid());
            List<ProcSockets.Socket> agentSockets = ProcSockets.of(agent.pid());
            log(jdk, "sockets without the agent " + plainSockets + "; with the agent (beans registered) " + agentSockets);
            assertThat(listening(plainSockets)).as("listening sockets of the control %s", plain).isEmpty();
            assertThat(listening(agentSockets)).as("listening sockets with the agent, all sockets: %s\n%s", agentSockets,
                    agent.describe()).isEmpty();
            assertThat(agentSockets).as("sockets with the agent: none on the network").noneMatch(s ->
                    s.protocol().startsWith("tcp") || s.protocol().startsWith("udp"));

            try (JmxClient plainJmx = JmxClient.attach(plain.pid(), plain.toString(), TIMEOUT);
                 JmxClient agentJmx = JmxClient.attach(agent.pid(), agent.toString(), TIMEOUT)) {
                assertThat(agentJmx.isRegistered(ALLOCATOR)).as("kmem4j beans over the local connector").isTrue();
                assertThat(plainJmx.isRegistered(ALLOCATOR)).isFalse();
                List<ProcSockets.Socket> plainListening = ProcSockets.listening(plain.pid());
                List<ProcSockets.Socket> agentListening = ProcSockets.listening(agent.pid());
                log(jdk, "listening once a local JMX client attached: without the agent " + plainListening
                        + "; with the agent " + agentListening);
                assertThat(protocols(agentListening)).as("listening once a local JMX client attached, with the agent"
                        + " %s vs without %s", agentListening, plainListening).isEqualTo(protocols(plainListening));
            }
            for (ForkedJvm jvm : List.of(plain, agent)) {
                jvm.closeStdin();
                assertThat(jvm.waitForExit(TIMEOUT)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
            }
        }
    }

    private static ForkedJvm start(Jdk jdk, String name, List<String> jvmArgs) {
        return ForkedJvm.builder(jdk, name + jdk.label()).jvmArgs(jvmArgs)
                .mainClass(AppRun.classpath(AppRun.appClasses()), APP).start();
    }

    private static List<ProcSockets.Socket> listening(List<ProcSockets.Socket> sockets) {
        return sockets.stream().filter(ProcSockets.Socket::listening).toList();
    }

    private static List<String> protocols(List<ProcSockets.Socket> sockets) {
        return sockets.stream().map(ProcSockets.Socket::protocol).sorted().toList();
    }

    private static void log(Jdk jdk, String text) {
        System.out.println(TestJdks.LOG_PREFIX + "ports JDK " + jdk.version() + ": " + text);
    }
}
