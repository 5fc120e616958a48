package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/** Declared as a pool in PoolPairIT but its "release" takes a String: kmem4j must leave it alone. */
public final class BadPool {
    public static final AtomicLong OWN_TAKES = new AtomicLong();

    public ByteBuffer take(int size) {
        OWN_TAKES.incrementAndGet();
        return ByteBuffer.allocateDirect(size);
    }

    public void give(String name) {
        // not a buffer
    }
}
