package io.kmem4j.agent.cli;

import java.io.File;
import java.util.concurrent.Callable;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.tools.attach.VirtualMachine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attach <pid> [options]}: loads kmem4j into a running JVM through the Attach API, then
 * confirms over the target's local JMX connector that {@code kmem4j:type=Allocator} is there and
 * serving. Loaded classes are retransformed; buffers allocated before the attach stay the JDK's. When
 * the target answers that interception is off ({@code Enabled=false}, e.g. its JDK does not match)
 * the command prints the target's {@code DisabledReason} at once and exits 1. A target that already
 * runs kmem4j (its system property {@code io.kmem4j.agent.serving}) gets nothing loaded: the command
 * says so, with its counters, and exits 0.
 */
@Command(name = "attach", mixinStandardHelpOptions = true,
    description = {"Load kmem4j into a running JVM (Attach API).",
        "On JDK 21+ the target prints a warning about dynamic agent loading unless it was started with"
            + " -XX:+EnableDynamicAgentLoading; a future JDK may refuse without it."})
final class AttachCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "process id of the target JVM")
    long pid;

    @Parameters(index = "1", arity = "0..1", description = "agent options, key=value[,key=value...] (as for -javaagent)")
    String options;

    @Option(names = "--wait", defaultValue = "10", description = "seconds to wait for the allocator's MXBean (default ${DEFAULT-VALUE})")
    int waitSeconds;

    @Override
    public Integer call() throws Exception {
        final String jar = new File(Class.forName("io.kmem4j.agent.Kmem4jAgent", false,
            ClassLoader.getSystemClassLoader()).getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        final VirtualMachine vm;
        try {
            vm = AttachTarget.attach(pid);
        } catch (final AttachTarget.Refused refused) {
            System.err.println("kmem4j: cannot attach to pid " + pid + ": " + refused.getMessage());
            return 1;
        } catch (final Exception e) {
            System.err.println("kmem4j: cannot attach to pid " + pid + ": " + e.getMessage()
                + " (is it a JVM run by the same user?)");
            return 1;
        }
        try {
            final java.util.Properties target = vm.getSystemProperties();
            final String serving = target.getProperty(io.kmem4j.agent.AgentInstaller.SERVING_PROPERTY);
            final String state = target.getProperty(io.kmem4j.agent.AgentInstaller.STATE_PROPERTY);
            final boolean running = serving != null && state == null;
            final String disabled = Off.startedDisabled(target, pid);
            if (disabled != null) {
                // no bean to wait for (enabled=false registers none), and a load would change nothing
                System.err.println(disabled + "; nothing loaded (kmem4j loads once per JVM: restart it without"
                    + " enabled=false)");
                return 1;
            }
            try {
                if (!running) {
                    vm.loadAgent(jar, options);
                }
            } catch (final com.sun.tools.attach.AgentLoadException | com.sun.tools.attach.AgentInitializationException
                           | java.io.IOException e) {
                // one line, no stack trace: the target refused (e.g. -XX:-EnableDynamicAgentLoading) or failed
                System.err.println("kmem4j: pid " + pid + " did not load the agent: " + e.getMessage()
                    + " (the target runs on unchanged; see README, Attaching)");
                return 1;
            }
            final String address = vm.startLocalManagementAgent();
            try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
                final MBeanServerConnection server = connector.getMBeanServerConnection();
                final ObjectName name = new ObjectName("kmem4j:type=Allocator");
                final long deadline = System.nanoTime() + waitSeconds * 1_000_000_000L;
                while (!server.isRegistered(name)) {
                    if (System.nanoTime() > deadline) {
                        System.err.println("kmem4j: loaded into pid " + pid + " but kmem4j:type=Allocator did not appear"
                            + " within " + waitSeconds + " s; the target's stderr says why ([kmem4j] lines)");
                        return 1;
                    }
                    Thread.sleep(100);
                }
                final String off = Off.reason(server, name);
                if (off != null) {
                    System.err.println("kmem4j: pid " + pid + " loaded the agent but interception is off, it runs on the"
                        + " JDK's allocator: " + off);
                    return 1;
                }
                final String counters = "allocations=" + server.getAttribute(name, "Allocations")
                    + " fallbacks=" + server.getAttribute(name, "Fallbacks") + " (watch kmem4j:type=Allocator in jconsole)";
                if (running) {
                    System.out.println("kmem4j: pid " + pid + " already runs kmem4j " + serving + "; nothing loaded"
                        + (options == null || options.isEmpty() ? "" : " (options not applied: " + options + ")") + "; "
                        + counters);
                } else {
                    System.out.println("kmem4j: attached to pid " + pid + "; " + counters);
                }
            }
            return 0;
        } finally {
            vm.detach();
        }
    }
}
