package io.kmem4j.agent;

import java.lang.instrument.Instrumentation;

/**
 * Entry point of {@code kmem4j-agent.jar}: {@code -javaagent:kmem4j-agent.jar[=key=value,...]}
 * ({@link #premain}) or a dynamic attach ({@link #agentmain}).
 *
 * <p>This class does almost nothing and never throws: any failure while installing is logged once
 * and the application runs on the JDK's own allocator.
 */
public final class Kmem4jAgent {
    private Kmem4jAgent() {
    }

    /**
     * Called by the JVM before {@code main} for {@code -javaagent}.
     *
     * @param args the text after {@code =}, e.g. {@code summary=true,maxSizeClassBytes=65536}; may be null
     * @param inst the JVM's instrumentation
     */
    public static void premain(final String args, final Instrumentation inst) {
        AgentInstaller.installSafely(args, inst, false);
    }

    /**
     * Called by the JVM for a dynamic attach (Attach API {@code loadAgent}).
     *
     * @param args as for {@link #premain}
     * @param inst the JVM's instrumentation
     */
    public static void agentmain(final String args, final Instrumentation inst) {
        AgentInstaller.installSafely(args, inst, true);
    }
}
