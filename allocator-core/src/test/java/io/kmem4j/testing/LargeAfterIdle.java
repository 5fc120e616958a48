package io.kmem4j.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import io.kmem4j.core.SlabAllocator;

/** Work of an owner thread that must have no frame of kmem4j's core on its stack while it waits ({@link Churn}). */
public final class LargeAfterIdle {
    private LargeAfterIdle() {
    }

    /** Churns {@code n} explicit buffers of {@code size}, goes idle, then asks for one buffer above the largest class. */
    public static Runnable churnIdleThenLarge(final SlabAllocator a, final int n, final int size, final int large,
                                              final CountDownLatch idle, final CountDownLatch wake,
                                              final AtomicReference<Throwable> failure) {
        return () -> {
            try {
                Churn.explicit(a, n, size);
                idle.countDown();
                wake.await(); // parked, outside kmem4j
                a.tryAllocate(large); // above the largest class, at the limit: Reaper.relieveBudgetFor
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
            }
        };
    }
}
