package io.kmem4j.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * The few {@code sun.misc.Unsafe} methods the benchmarks call, through {@code static final} method
 * handles bound to {@code theUnsafe}: the JIT inlines them like direct calls, and the source does
 * not name the class (javac warns on every mention of it and the warning cannot be suppressed).
 */
final class Unsafes {
    private static final MethodHandle INVOKE_CLEANER;
    private static final MethodHandle ALLOCATE_MEMORY;
    private static final MethodHandle SET_MEMORY;
    private static final MethodHandle FREE_MEMORY;

    static {
        try {
            final Class<?> c = Class.forName("sun.misc.Unsafe");
            final Field f = c.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            final Object u = f.get(null);
            final MethodHandles.Lookup l = MethodHandles.lookup();
            INVOKE_CLEANER = l.findVirtual(c, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class)).bindTo(u);
            ALLOCATE_MEMORY = l.findVirtual(c, "allocateMemory", MethodType.methodType(long.class, long.class)).bindTo(u);
            SET_MEMORY = l.findVirtual(c, "setMemory",
                MethodType.methodType(void.class, long.class, long.class, byte.class)).bindTo(u);
            FREE_MEMORY = l.findVirtual(c, "freeMemory", MethodType.methodType(void.class, long.class)).bindTo(u);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Unsafes() {
    }

    /** {@code Unsafe.invokeCleaner(buffer)}: runs a root direct buffer's cleaner now. */
    static void invokeCleaner(final ByteBuffer buffer) {
        try {
            INVOKE_CLEANER.invokeExact(buffer);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code Unsafe.allocateMemory(bytes)} (malloc). */
    static long allocateMemory(final long bytes) {
        try {
            return (long) ALLOCATE_MEMORY.invokeExact(bytes);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code Unsafe.setMemory(address, bytes, value)}. */
    static void setMemory(final long address, final long bytes, final byte value) {
        try {
            SET_MEMORY.invokeExact(address, bytes, value);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code Unsafe.freeMemory(address)} (free). */
    static void freeMemory(final long address) {
        try {
            FREE_MEMORY.invokeExact(address);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
