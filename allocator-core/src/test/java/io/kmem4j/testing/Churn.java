package io.kmem4j.testing;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.kmem4j.core.SlabAllocator;

/**
 * Work for a thread of a test that must run outside kmem4j's core package: a frame of that package
 * on a thread's stack means "inside a call into kmem4j" to the reaper, and a test class of the core
 * package would be such a frame.
 */
public final class Churn {
    private Churn() {
    }

    /**
     * Allocates {@code n} explicit buffers of {@code size} bytes, checks each zero-filled, writes it,
     * and frees them all.
     *
     * @throws AssertionError when a buffer is not kmem4j's or not zero-filled
     */
    public static void explicit(final SlabAllocator a, final int n, final int size) {
        final List<ByteBuffer> live = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final ByteBuffer b = a.allocateExplicit(size);
            if (!a.owns(b)) {
                throw new AssertionError("not kmem4j's: " + b);
            }
            for (int k = 0; k < size; k += 64) {
                if (b.get(k) != 0) {
                    throw new AssertionError("not zero-filled at " + k + ": buffer " + i);
                }
            }
            b.put(0, (byte) 1).put(size - 1, (byte) 1);
            live.add(b);
        }
        for (final ByteBuffer b : live) {
            a.free(b);
        }
    }

    /** A runnable for a thread: churns, counts down {@code idle}, waits for {@code wake}, churns again. */
    public static Runnable idleBetween(final SlabAllocator a, final int n, final int size,
                                       final java.util.concurrent.CountDownLatch idle,
                                       final java.util.concurrent.CountDownLatch wake,
                                       final java.util.concurrent.atomic.AtomicReference<Throwable> failure) {
        return () -> {
            try {
                explicit(a, n, size);
                idle.countDown();
                wake.await(); // parked, outside kmem4j
                explicit(a, n, size);
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
            }
        };
    }

    /** A runnable for a thread: churns, counts down {@code churned}, waits for {@code go}, then allocates and frees one buffer of {@code thenSize}. */
    public static Runnable thenOne(final SlabAllocator a, final int n, final int size,
                                   final java.util.concurrent.CountDownLatch churned,
                                   final java.util.concurrent.CountDownLatch go, final int thenSize,
                                   final java.util.concurrent.atomic.AtomicReference<Throwable> failure) {
        return () -> {
            try {
                explicit(a, n, size);
                churned.countDown();
                go.await();
                a.free(a.allocateExplicit(thenSize));
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
            }
        };
    }
}
