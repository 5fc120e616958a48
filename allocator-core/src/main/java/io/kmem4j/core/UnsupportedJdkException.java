package io.kmem4j.core;

/**
 * Thrown by {@link SlabAllocator}'s constructor when this JDK's {@code java.nio} internals are not
 * what kmem4j builds its buffers with (the mapped-buffer {@code DirectByteBuffer} constructor, its
 * cleaner and the thread that runs cleaners after GC, {@code java.nio.Bits}), or are not open to
 * kmem4j; the agent throws it too when this JDK's class files are newer than its bytecode library
 * reads. The message names the JDK and what did not match, e.g. {@code the java.nio internals of
 * JDK 28 (...) do not match kmem4j's needs: DirectByteBuffer.cleaner(): ...}. Callers fall back to
 * the JDK's own allocation; the agent logs one warning.
 */
public final class UnsupportedJdkException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message the JDK, what did not match, and (for missing access) how to open it */
    public UnsupportedJdkException(final String message) {
        super(message);
    }

    /**
     * @return the running JDK as messages name it:
     *         {@code JDK 26.0.2.1+1-1-Debian (Debian, /usr/lib/jvm/java-26-openjdk-amd64)}
     */
    public static String runningJdk() {
        return "JDK " + Runtime.version() + " (" + System.getProperty("java.vendor") + ", "
            + System.getProperty("java.home") + ")";
    }
}
