package io.kmem4j.core;

import java.nio.ByteBuffer;

/**
 * Builds a root {@code java.nio.DirectByteBuffer} over memory the caller owns, with the JDK
 * constructor kmem4j's allocator uses (the mapped-buffer constructor, found by shape; see the
 * package documentation). For benchmarks and tools that must measure exactly what kmem4j's buffers
 * cost; an application has no use for it.
 *
 * <p>Threads: any. Needs {@code java.nio} opened to this module (the agent opens it;
 * {@code --add-opens java.base/java.nio=ALL-UNNAMED} otherwise).
 */
public final class RootBuffers {
    private RootBuffers() {
    }

    /**
     * @param address  start of memory the caller owns and keeps valid while the buffer is reachable
     * @param capacity bytes, {@code >= 0}
     * @param hook     run exactly once as the buffer's JDK cleaner (on {@code invokeCleaner}, {@code clean()}
     *                 or after GC, then on the JDK's cleaner thread: it must not block nor throw), or
     *                 {@code null} for a buffer without cleaner
     * @return a root buffer: position 0, limit and capacity {@code capacity}, {@code BIG_ENDIAN},
     *         writable, no attachment (views keep it alive)
     * @throws UnsupportedJdkException when this JDK's internals do not match (the message says what)
     */
    public static ByteBuffer wrap(final long address, final int capacity, final Runnable hook) {
        final String failure = JdkInternals.handlesFailure(); // the probe's, or the handles' when the probe passed
        if (failure != null) {
            throw new UnsupportedJdkException(failure);
        }
        return JdkInternals.newDirectBuffer(capacity, address, hook);
    }
}
