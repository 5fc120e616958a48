package io.kmem4j.agent.bridge;

/**
 * A thread of the agent's own (JMX registration, shutdown). Direct buffers allocated on it are never
 * served by the slab allocator, so the agent's own work cannot re-enter or disturb the allocator it
 * observes (case C14); they come from {@link AgentBuffers}, outside the application's direct-memory
 * budget (or, beyond its limit, from the JDK). Daemon, so it never keeps the JVM alive.
 */
public final class AgentThread extends Thread {
    public AgentThread(final String name, final Runnable task) {
        super(task, name);
        setDaemon(true);
    }
}
