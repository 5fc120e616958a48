package io.kmem4j.agent.bridge;

import java.util.function.IntFunction;

import io.kmem4j.agent.log.Failures;
import io.kmem4j.core.SlabAllocator;

/**
 * The bridge's delegate: {@code capacity -> slab buffer}, or {@code null} to let the JDK allocate.
 * Anything unexpected falls back to the JDK; the first such failure is logged once.
 *
 * The agent's own threads ({@link AgentThread}) get {@link AgentBuffers}, never slab buffers.
 *
 * <p>Threads: called by every thread that calls {@code ByteBuffer.allocateDirect}.
 */
public final class Interceptor implements IntFunction<Object> {
    private final SlabAllocator allocator;
    private final Failures failures = new Failures();

    public Interceptor(final SlabAllocator allocator) {
        this.allocator = allocator;
    }

    /** @return the allocator this interceptor serves from. */
    public SlabAllocator allocator() {
        return allocator;
    }

    /** @return allocations that failed inside kmem4j and went to the JDK instead. */
    public long failures() {
        return failures.count();
    }

    /**
     * Declared to return {@code Object}, the erasure of {@code IntFunction.apply}: with {@code ByteBuffer} javac
     * adds a bridge method, and the JIT compiled the whole allocation path once more as the root of that bridge.
     *
     * @return a {@code ByteBuffer}, or {@code null} to let the JDK allocate
     */
    @Override
    public Object apply(final int capacity) {
        if (Thread.currentThread() instanceof AgentThread) {
            // the agent's own: never the slabs, and outside the application's budget (null: the JDK's path)
            return AgentBuffers.allocate(capacity);
        }
        try {
            return allocator.tryAllocate(capacity);
        } catch (final Throwable t) {
            failures.record("allocation of " + capacity + " bytes", "the JDK's allocateDirect", t);
            return null;
        }
    }
}
