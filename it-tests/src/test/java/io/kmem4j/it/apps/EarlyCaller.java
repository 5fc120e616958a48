package io.kmem4j.it.apps;

import java.nio.ByteBuffer;

/** Calls allocateDirect; loaded by {@link EarlyAgent} before kmem4j's premain runs. */
public final class EarlyCaller {
    private EarlyCaller() {
    }

    public static ByteBuffer allocate(int capacity) {
        return ByteBuffer.allocateDirect(capacity);
    }
}
