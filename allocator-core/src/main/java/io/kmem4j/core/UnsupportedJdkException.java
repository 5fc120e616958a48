package io.kmem4j.core;

/**
 * Thrown by {@link SlabAllocator}'s constructor when this JDK's {@code java.nio} internals are not
 * what kmem4j builds its buffers with (the mapped-buffer {@code DirectByteBuffer} constructor, its
 * cleaner, {@code java.nio.Bits}), or are not open to kmem4j. Expected on JDK 26 (JDK-8344332).
 * Callers fall back to the JDK's own allocation; the agent logs one warning.
 */
public final class UnsupportedJdkException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message what is missing and how to open it */
    public UnsupportedJdkException(final String message) {
        super(message);
    }
}
