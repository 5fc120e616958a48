package io.kmem4j.it.apps;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/** {@code sun.misc.Unsafe.invokeCleaner(buffer)}, the release call libraries use, through reflection. */
public final class Cleaners {

    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
        try {
            Class<?> type = Class.forName("sun.misc.Unsafe");
            Field f = type.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = f.get(null);
            INVOKE_CLEANER = type.getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Cleaners() {
    }

    /** Releases {@code buffer} at once; rethrows what {@code invokeCleaner} throws (e.g. for a view). */
    public static void invokeCleaner(ByteBuffer buffer) {
        try {
            INVOKE_CLEANER.invoke(UNSAFE, buffer);
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t instanceof RuntimeException) {
                throw (RuntimeException) t;
            }
            if (t instanceof Error) {
                throw (Error) t;
            }
            throw new IllegalStateException(t);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
