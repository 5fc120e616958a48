package io.kmem4j.agent;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

import io.kmem4j.core.SlabAllocator;

/**
 * The bridge's delegate: {@code capacity -> slab buffer}, or {@code null} to let the JDK allocate.
 * Anything unexpected falls back to the JDK; the first such failure is logged once.
 *
 * <p>Threads: called by every thread that calls {@code ByteBuffer.allocateDirect}.
 */
final class Interceptor implements IntFunction<ByteBuffer> {
    private final SlabAllocator allocator;
    private final AtomicBoolean failureLogged = new AtomicBoolean();
    private final LongAdder failures = new LongAdder();

    Interceptor(final SlabAllocator allocator) {
        this.allocator = allocator;
    }

    /** @return allocations that failed inside kmem4j and went to the JDK instead. */
    long failures() {
        return failures.sum();
    }

    @Override
    public ByteBuffer apply(final int capacity) {
        if (Thread.currentThread() instanceof AgentThread) {
            return null; // the agent's own allocations go to the JDK
        }
        try {
            return allocator.tryAllocate(capacity);
        } catch (final Throwable t) {
            failures.increment();
            if (failureLogged.compareAndSet(false, true)) {
                try {
                    AgentLog.get(Interceptor.class).warn("allocation of {} bytes failed inside kmem4j; this and later"
                        + " failures fall back to the JDK's allocateDirect", capacity, t);
                } catch (final Throwable ignored) {
                    // logging must never break the application
                }
            }
            return null;
        }
    }
}
