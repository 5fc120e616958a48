package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

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

    /**
     * Reserves all of {@code MaxDirectMemorySize} but 1 MiB (less than one 4 MiB chunk) the way the
     * JDK counts its own buffers.
     *
     * @return the bytes reserved, to give back with {@code JdkInternals.unreserveDirectMemory}
     */
    static long exhaustBudgetLeavingOneMebibyte() throws ReflectiveOperationException {
        return exhaustBudgetLeaving(1 << 20);
    }

    /**
     * Reserves all of {@code MaxDirectMemorySize} but {@code left} bytes the way the JDK counts its own buffers.
     * Direct buffers earlier tests of this JVM dropped are collected first: a collection the test causes
     * later would otherwise give their memory back and leave more than {@code left}.
     *
     * @return the bytes reserved, to give back with {@code JdkInternals.unreserveDirectMemory}
     */
    static long exhaustBudgetLeaving(final long left) throws ReflectiveOperationException {
        do {
            System.gc();
        } while (ReferenceProcessing.help(null));
        final Class<?> bits = Class.forName("java.nio.Bits");
        final long max = (long) declaredField(bits, "MAX_MEMORY").get(null);
        final long used = ((java.util.concurrent.atomic.AtomicLong) declaredField(bits, "RESERVED_MEMORY").get(null)).get();
        final long take = max - used - left;
        if (!JdkInternals.tryReserveDirectMemory(take)) {
            throw new IllegalStateException("could not reserve " + take + " bytes of the direct-memory budget");
        }
        return take;
    }

    private static Field declaredField(final Class<?> owner, final String name) throws NoSuchFieldException {
        final Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    /** Releases a buffer the way applications and Netty do: {@code sun.misc.Unsafe.invokeCleaner}. */
    static void invokeCleaner(final ByteBuffer b) {
        UNSAFE.invokeCleaner(b);
    }

    /**
     * {@code ((sun.nio.ch.DirectBuffer) buffer).cleaner()} of any direct buffer, byte or typed view
     * (through {@code java.nio}, which the test JVM opens).
     *
     * @return the buffer's {@code jdk.internal.ref.Cleaner}, or {@code null} (views, no-cleaner buffers)
     */
    static Object cleanerOf(final Object directBuffer) {
        try {
            final java.lang.reflect.Method m = directBuffer.getClass().getMethod("cleaner");
            m.setAccessible(true);
            return m.invoke(directBuffer);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Releases a buffer the way older libraries do: {@code ((DirectBuffer) buffer).cleaner().clean()},
     * when it has a cleaner (needs {@code --add-exports java.base/jdk.internal.ref=ALL-UNNAMED}).
     *
     * @return whether the buffer had a cleaner to run
     */
    static boolean cleanerClean(final Object directBuffer) {
        final Object cleaner = cleanerOf(directBuffer);
        if (cleaner == null) {
            return false;
        }
        try {
            Class.forName("jdk.internal.ref.Cleaner").getMethod("clean").invoke(cleaner);
            return true;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the caches of {@code a}, by size class. */
    static SlabCache[] caches(final SlabAllocator a) {
        final SlabCache[] cs = new SlabCache[a.classes.count()];
        for (int c = 0; c < cs.length; c++) {
            cs[c] = a.cache(c);
        }
        return cs;
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

    /**
     * Sizes around every size-class boundary of {@code a} ({@code s-1, s, s+1} within the served window),
     * smallest first.
     */
    static List<Integer> boundarySizes(final SlabAllocator a) {
        final List<Integer> sizes = new ArrayList<>();
        for (int c = 0; c < a.classes.count(); c++) {
            final int s = a.classes.size(c);
            for (final int n : new int[] {s - 1, s, s + 1}) {
                if (n >= a.config().minCapacityBytes() && n <= a.maxCapacity() && !sizes.contains(n)) {
                    sizes.add(n);
                }
            }
        }
        return sizes;
    }

    /**
     * No byte crosses buffers: allocates {@code n} buffers (sizes around every class boundary and random
     * sizes, tracked and explicit in turn), each must be all zeros and no two may overlap; writes a
     * distinct pattern into each, verifies every one after all were written, releases them all.
     */
    static void assertDistinctPatterns(final SlabAllocator a, final int n, final long seed) {
        final SplittableRandom r = new SplittableRandom(seed);
        final List<Integer> boundaries = boundarySizes(a);
        final List<ByteBuffer> live = new ArrayList<>(n);
        final TreeMap<Long, Integer> ranges = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            final int size = i % 2 == 0 ? boundaries.get((i / 2) % boundaries.size()) : 1 + r.nextInt(a.maxCapacity());
            final ByteBuffer b = i % 4 < 2 ? a.allocate(size) : a.allocateExplicit(size);
            assertThat(firstNot(b, (byte) 0)).as("fresh buffer %d of %d bytes all zeros", i, size).isEqualTo(-1);
            if (a.owns(b)) {
                final long start = address(b);
                final int length = Math.max(size, 1);
                final java.util.Map.Entry<Long, Integer> below = ranges.floorEntry(start + length - 1);
                assertThat(below == null || below.getKey() + below.getValue() <= start)
                    .as("buffer %d [0x%x, +%d) overlaps a live buffer at %s", i, start, size, below).isTrue();
                ranges.put(start, length);
            }
            writePattern(b, i);
            live.add(b);
        }
        for (int i = 0; i < n; i++) {
            assertThat(checkPattern(live.get(i), i)).as("buffer %d shows no byte of another", i).isEqualTo(-1);
        }
        for (int i = 0; i < n; i++) {
            if (i % 4 < 2) {
                invokeCleaner(live.get(i));
            } else {
                a.free(live.get(i));
            }
        }
    }

    /**
     * The figures that differ between two snapshots, as {@code "name: before -> after"} (per cache as
     * {@code "kmem4j-128.name: ..."}), leaving out {@code ignored} top-level figures.
     */
    static List<String> statsDiff(final AllocatorStats before, final AllocatorStats after, final String... ignored) {
        final List<String> out = new ArrayList<>();
        diffRecord("", before, after, List.of(ignored), out);
        for (int i = 0; i < Math.min(before.caches().size(), after.caches().size()); i++) {
            diffRecord(before.caches().get(i).name() + ".", before.caches().get(i), after.caches().get(i), List.of(), out);
        }
        return out;
    }

    private static void diffRecord(final String prefix, final Record before, final Record after,
                                   final List<String> ignored, final List<String> out) {
        for (final java.lang.reflect.RecordComponent c : before.getClass().getRecordComponents()) {
            if (ignored.contains(c.getName()) || c.getType() == List.class) {
                continue;
            }
            try {
                final Object x = c.getAccessor().invoke(before);
                final Object y = c.getAccessor().invoke(after);
                if (!java.util.Objects.equals(x, y)) {
                    out.add(prefix + c.getName() + ": " + x + " -> " + y);
                }
            } catch (final ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A test body that may throw anything. */
    interface ThrowingRunnable {
        void run() throws Throwable;
    }

    /**
     * Runs {@code body} on a new platform thread named {@code name} and waits (at most 60 s) until the
     * thread has ended. What the body throws is rethrown here; an error other than an assertion (an
     * injected {@code OutOfMemoryError} escaping the allocator, say) is wrapped in an
     * {@link AssertionError}, or JUnit would end the test JVM.
     */
    static void onFreshThread(final String name, final ThrowingRunnable body) throws Throwable {
        final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        final Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (final Throwable e) {
                failure.set(e);
            }
        }, name);
        t.start();
        t.join(60_000);
        if (t.isAlive()) {
            throw new AssertionError("thread " + name + " did not end within 60 s");
        }
        final Throwable thrown = failure.get();
        if (thrown instanceof AssertionError || thrown instanceof Exception) {
            throw thrown;
        }
        if (thrown != null) {
            throw new AssertionError("thrown on " + name + ": " + thrown, thrown);
        }
    }
}
