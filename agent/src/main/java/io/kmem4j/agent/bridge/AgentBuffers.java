package io.kmem4j.agent.bridge;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.kmem4j.core.RootBuffers;
import org.agrona.UnsafeApi;

/**
 * Direct buffers for the agent's own threads ({@link AgentThread}: JMX set-up, shutdown), taken
 * outside the application's direct-memory budget: memory from {@code Unsafe.allocateMemory}, not
 * reserved through {@code java.nio.Bits}, so neither {@code -XX:MaxDirectMemorySize} nor the JDK's
 * {@code direct} pool counts it, and never from the slabs. What the agent's threads allocate is
 * mostly the JDK's own: on JDK 17-23 its file and socket I/O borrows temporary direct buffers
 * ({@code sun.nio.ch.Util}, 8 KiB and up, through {@code ByteBuffer.allocateDirect}, cached per
 * thread until the thread ends), e.g. while the platform MBean server reads the cgroup files; under a
 * small limit those failed the agent's JMX registration, and under any limit they held the
 * application's budget.
 *
 * <p>Shape as {@code allocateDirect}'s: a root {@code DirectByteBuffer}, exact capacity, zero-filled,
 * big-endian, with a JDK cleaner that frees the memory exactly once ({@code invokeCleaner},
 * {@code clean()}, the temporary-buffer cache's own free, or GC). At most {@link #LIMIT_BYTES} are
 * out at a time; a request beyond that, of 0 bytes, or any failure here answers {@code null}: the
 * JDK's own path then allocates (within the budget), as before.
 *
 * <p>Threads: any; the count of bytes out is one atomic.
 */
public final class AgentBuffers {
    /** The most memory the agent's threads hold outside the budget at a time (1 MiB). */
    public static final long LIMIT_BYTES = 1 << 20;

    private static final AtomicLong OUTSTANDING = new AtomicLong();

    private AgentBuffers() {
    }

    /**
     * @param capacity bytes
     * @return a buffer outside the budget, or {@code null} for the JDK's own path; never throws
     */
    public static ByteBuffer allocate(final int capacity) {
        if (capacity <= 0 || capacity > LIMIT_BYTES) {
            return null;
        }
        if (OUTSTANDING.addAndGet(capacity) > LIMIT_BYTES) {
            OUTSTANDING.addAndGet(-capacity);
            return null;
        }
        long address = 0;
        try {
            address = UnsafeApi.allocateMemory(capacity);
            UnsafeApi.setMemory(address, capacity, (byte) 0);
            return RootBuffers.wrap(address, capacity, new Free(address, capacity));
        } catch (final Throwable t) {
            if (address != 0) {
                UnsafeApi.freeMemory(address);
            }
            OUTSTANDING.addAndGet(-capacity);
            return null;
        }
    }

    /** @return bytes the agent's threads hold outside the budget now */
    public static long outstandingBytes() {
        return OUTSTANDING.get();
    }

    /** The cleaner's thunk: frees the memory once (it may run on the JDK's cleaner thread; never blocks nor throws). */
    private static final class Free extends AtomicBoolean implements Runnable {
        private final long address;
        private final int capacity;

        Free(final long address, final int capacity) {
            this.address = address;
            this.capacity = capacity;
        }

        @Override
        public void run() {
            if (compareAndSet(false, true)) {
                UnsafeApi.freeMemory(address);
                OUTSTANDING.addAndGet(-capacity);
            }
        }
    }
}
