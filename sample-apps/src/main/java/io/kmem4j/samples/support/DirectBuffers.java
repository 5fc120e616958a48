package io.kmem4j.samples.support;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Frees direct buffers eagerly, the way NIO libraries do: through {@code
 * sun.misc.Unsafe.invokeCleaner(ByteBuffer)}, looked up reflectively. When that is unavailable the
 * buffer is simply left to the garbage collector.
 *
 * <p>Stateless after class initialization; safe to use from any thread.
 */
public final class DirectBuffers {

    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
        Object unsafe = null;
        Method invokeCleaner = null;
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            invokeCleaner = unsafeClass.getMethod("invokeCleaner", ByteBuffer.class);
            unsafe = theUnsafe.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            invokeCleaner = null;
        }
        UNSAFE = unsafe;
        INVOKE_CLEANER = invokeCleaner;
    }

    private DirectBuffers() {}

    /**
     * Releases the native memory of a direct buffer now. The buffer must not be used afterwards.
     *
     * @return {@code true} if the memory was released, {@code false} if the buffer was left to the
     *     garbage collector (heap buffer, slice or duplicate, or no cleaner access)
     */
    public static boolean free(ByteBuffer buffer) {
        if (INVOKE_CLEANER == null || !buffer.isDirect()) {
            return false;
        }
        try {
            INVOKE_CLEANER.invoke(UNSAFE, buffer);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
