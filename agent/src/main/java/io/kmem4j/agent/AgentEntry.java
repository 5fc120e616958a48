package io.kmem4j.agent;

import java.lang.instrument.Instrumentation;
import java.util.function.Supplier;

/**
 * The first class of the agent's private loader that runs: {@code Kmem4jAgent.premain} and
 * {@code agentmain} initialise it, and its static initializer takes their arguments from that loader
 * (a {@link Supplier} of {@code {args, instrumentation, dynamic}}) and calls
 * {@link AgentInstaller#installSafely}. A reflective call would do the same, but on JDK 18 and later
 * reflection spins method handles, some 10 ms of every start-up. One per private loader, so once per
 * load of the agent.
 */
final class AgentEntry {
    static {
        @SuppressWarnings("unchecked")
        final Object[] h = ((Supplier<Object[]>) AgentEntry.class.getClassLoader()).get();
        if (h != null) {
            AgentInstaller.installSafely((String) h[0], (Instrumentation) h[1], (Boolean) h[2]);
        }
    }

    private AgentEntry() {
    }
}
