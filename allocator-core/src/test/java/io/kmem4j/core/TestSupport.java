package io.kmem4j.core;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;

import org.agrona.BufferUtil;

/** Helpers shared by the allocator tests. */
final class TestSupport {
    private static final sun.misc.Unsafe UNSAFE;

    static {
        try {
            final Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (sun.misc.Unsafe) f.get(null);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private TestSupport() {
    }

    /** Releases a buffer the way applications and Netty do: {@code sun.misc.Unsafe.invokeCleaner}. */
    static void invokeCleaner(final ByteBuffer b) {
        UNSAFE.invokeCleaner(b);
    }

    static long address(final ByteBuffer b) {
        return BufferUtil.address(b);
    }

    static void fill(final ByteBuffer b, final byte value) {
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, value);
        }
    }

    /** @return index of the first byte not equal to {@code value}, or -1. */
    static int firstNot(final ByteBuffer b, final byte value) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != value) {
                return i;
            }
        }
        return -1;
    }

    /** Pattern byte for buffer {@code id} at {@code index}: differs between neighbours and ids. */
    static byte pattern(final long id, final int index) {
        return (byte) (id * 31 + index * 7 + (id >>> 8));
    }

    static void writePattern(final ByteBuffer b, final long id) {
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, pattern(id, i));
        }
    }

    /** @return index of the first byte that does not carry {@code id}'s pattern, or -1. */
    static int checkPattern(final ByteBuffer b, final long id) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != pattern(id, i)) {
                return i;
            }
        }
        return -1;
    }
}
