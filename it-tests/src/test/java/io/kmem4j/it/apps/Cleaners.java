package io.kmem4j.it.apps;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;

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

    /**
     * Releases any direct buffer the way older libraries do, {@code ((DirectBuffer) buffer).cleaner().clean()}
     * (needs {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} and the package of the cleaner type:
     * {@code java.base/jdk.internal.ref} on 17-25, {@code java.base/sun.nio} on 26+). {@code clean()} is
     * looked up on the declared return type of {@code cleaner()} ({@code jdk.internal.ref.Cleaner}, or the
     * interface {@code sun.nio.Cleaner} on 26+, whose implementation class is not public).
     *
     * @return {@code "cleaned"}, {@code "cleaner=null"} (views, buffers without a cleaner) or
     *         {@code "not a DirectBuffer"} (heap buffers)
     */
    public static String cleanerClean(Object buffer) {
        try {
            Class<?> directBuffer = Class.forName("sun.nio.ch.DirectBuffer");
            if (!directBuffer.isInstance(buffer)) {
                return "not a DirectBuffer";
            }
            Method cleanerMethod = directBuffer.getMethod("cleaner");
            Object cleaner = cleanerMethod.invoke(buffer);
            if (cleaner == null) {
                return "cleaner=null";
            }
            cleanerMethod.getReturnType().getMethod("clean").invoke(cleaner);
            return "cleaned";
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            return t.getClass().getName() + ": " + t.getMessage();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The {@code --add-exports} flags {@link #cleanerClean} needs on a JDK of {@code feature} version.
     *
     * @param feature the JDK's feature version
     * @return the flags
     */
    public static List<String> cleanerCleanExports(int feature) {
        return List.of("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
                feature >= 26 ? "--add-exports=java.base/sun.nio=ALL-UNNAMED"
                        : "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED");
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
