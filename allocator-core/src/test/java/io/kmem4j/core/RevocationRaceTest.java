package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A request above the largest class at the limit ({@code Reaper.relieveBudgetFor}) gives back the
 * caller's cache: it must first wait for a revocation in progress, as the hit paths do. Without that
 * (found by a reviewer of the revocation change), the reaper emptied the cache while its owner
 * drained and spilled into it: an empty magazine went into the depot's full list, and another
 * thread's refill popped past zero ({@code ArrayIndexOutOfBoundsException} from
 * {@code tryAllocateExplicit}, which never throws).
 */
class RevocationRaceTest {
    private static final int SIZE = 4096;
    private static final int LARGE = 1 << 20;

    @Test
    void aRequestAboveTheLargestClassAtTheLimitRacesARevocation() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        final int x = a.classes.indexOf(SIZE);
        final SlabCache cx = a.cache(x);
        final ReentrantLock lockX = cx.lock;
        final ReentrantLock reapLock = (ReentrantLock) field(a.reaper, "reapLock");
        final CountDownLatch idle = new CountDownLatch(1);
        final CountDownLatch wake = new CountDownLatch(1);
        final CountDownLatch passEnd = new CountDownLatch(1);
        final AtomicReference<Throwable> ownerFailure = new AtomicReference<>();
        final AtomicReference<Throwable> otherFailure = new AtomicReference<>();
        final AtomicReference<Boolean> revoked = new AtomicReference<>();
        try {
            // T: the owner. Churns (its magazines keep rounds), goes idle outside kmem4j.
            final Thread t = new Thread(io.kmem4j.testing.LargeAfterIdle.churnIdleThenLarge(a, 100, SIZE, LARGE, idle, wake,
                ownerFailure), "owner");
            t.start();
            assertThat(idle.await(30, TimeUnit.SECONDS)).isTrue();
            final ThreadCache tc = a.registry.of(t);
            final int rounds = tc.loaded[x].rounds.length;
            final int l = tc.loaded[x].count;
            final int p = tc.previous[x].count;
            // orphans T's drain takes in: enough that its last keep spills with a non-empty previous magazine
            final int orphans = p == 0 ? 2 * rounds - l + 1 : rounds - l + 1;
            makeOrphans(a, orphans);
            assertThat(a.remote.orphans.nonEmpty()).isTrue();
            take = TestSupport.exhaustBudgetLeaving(64 << 10); // a request above the largest class meets the limit

            lockX.lock();
            final Thread r;
            try {
                // R: the reaper's pass (the reap lock held), revoking T: its handshake finds T parked outside kmem4j
                r = new Thread(() -> {
                    reapLock.lock();
                    try {
                        revoked.set(a.reaper.revoke(tc));
                        passEnd.await(); // the rest of the pass
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        reapLock.unlock();
                    }
                }, "reaper-pass");
                r.start();
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> lockX.hasQueuedThread(r)); // emptying T's cache
                wake.countDown(); // T's next call: tryAllocate(1 MiB) -> relieveBudgetFor -> relieve(tc), no revocation test
                try {
                    Awaitility.await().atMost(Duration.ofSeconds(3)).until(() -> lockX.hasQueuedThread(t)); // T spills
                } catch (final org.awaitility.core.ConditionTimeoutException fixed) {
                    // T waits for the revocation to end (ThreadCache.resume) instead of working on its cache
                }
            } finally {
                lockX.unlock(); // R first (queued first): it flushes the two magazines T's spill holds
            }
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> reapLock.hasQueuedThread(t)); // T: trim waits for the pass
            assertThat(revoked.get()).as("the revocation went on").isTrue();

            // U: any thread whose next refill of this class takes the depot's first "full" magazine
            final Thread u = new Thread(() -> {
                try {
                    for (int i = 0; i < 2; i++) {
                        final ByteBuffer b = a.tryAllocateExplicit(SIZE); // never throws (its contract)
                        if (b != null) {
                            a.free(b);
                        }
                    }
                } catch (final Throwable e) {
                    otherFailure.set(e);
                }
            }, "other");
            u.start();
            u.join(30_000);
            passEnd.countDown();
            r.join(30_000);
            t.join(30_000);
            assertThat(ownerFailure.get()).isNull();
            assertThat(otherFailure.get()).as("a later allocation on another thread").isNull();
            assertThat(a.stats().allocationFailures()).as("refills that failed (an empty magazine in the depot's full list)").isZero();
        } finally {
            passEnd.countDown();
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }

    /** {@code n} frees of objects of unfrozen slabs, made by a thread without a private cache: orphans. */
    static void makeOrphans(final SlabAllocator a, final int n) throws InterruptedException {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread h = new Thread(() -> {
            try {
                final List<ByteBuffer> bs = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    bs.add(a.allocateExplicit(SIZE));
                }
                a.registry.bindCurrent(a.registry.shared);
                for (final ByteBuffer b : bs) {
                    a.free(b);
                }
            } catch (final Throwable e) {
                failure.set(e);
            }
        }, "orphan-maker");
        h.start();
        h.join();
        assertThat(failure.get()).isNull();
    }

    static Object field(final Object o, final String name) throws ReflectiveOperationException {
        final Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
    }
}
