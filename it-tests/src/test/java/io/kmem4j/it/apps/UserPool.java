package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An application's own direct-buffer pool: {@code take(int)} hands out a recycled buffer of that
 * exact capacity or a new one, {@code give(ByteBuffer)} puts it back for reuse. It has never heard
 * of kmem4j; PoolPairIT names it in {@code pools=}. The counters show which calls ran its own code.
 */
public final class UserPool {
    public static final AtomicLong OWN_TAKES = new AtomicLong();
    public static final AtomicLong OWN_GIVES = new AtomicLong();

    private final Map<Integer, ArrayDeque<ByteBuffer>> free = new HashMap<>();

    public synchronized ByteBuffer take(int size) {
        OWN_TAKES.incrementAndGet();
        ArrayDeque<ByteBuffer> q = free.get(size);
        ByteBuffer b = q == null ? null : q.pollFirst();
        return b != null ? b.clear() : ByteBuffer.allocateDirect(size);
    }

    public synchronized void give(ByteBuffer buffer) {
        OWN_GIVES.incrementAndGet();
        free.computeIfAbsent(buffer.capacity(), k -> new ArrayDeque<>()).addFirst(buffer);
    }

    /** Buffers waiting in the pool for reuse. */
    public synchronized int pooled() {
        return free.values().stream().mapToInt(ArrayDeque::size).sum();
    }
}
