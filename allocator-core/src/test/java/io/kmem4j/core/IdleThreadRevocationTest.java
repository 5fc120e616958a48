package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A live thread that stops allocating keeps nothing (the threads' work runs in
 * {@link io.kmem4j.testing.Churn}: a frame of this package would count as a call into kmem4j): after {@value Reaper#IDLE_LOOKS} reaper passes
 * without an allocation or free its magazines and frozen slabs go back, and the chunks they pinned
 * can be released; its next call takes its emptied cache back and works as before. A thread inside
 * a call into kmem4j keeps its cache.
 */
class IdleThreadRevocationTest {
    private static final int SIZE = 4096;
    private SlabAllocator a;

    @BeforeEach
    void create() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0).reapIntervalMillis(60_000).build());
        a.reaper.idleNanos = 0; // a pass revokes what the previous pass found idle
    }

    @AfterEach
    void close() {
        a.close();
    }

    @Test
    void anIdleThreadsCacheIsEmptiedAndTakenBackOnItsNextCall() throws Exception {
        final CountDownLatch idle = new CountDownLatch(1);
        final CountDownLatch wake = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread t = new Thread(io.kmem4j.testing.Churn.idleBetween(a, 200, SIZE, idle, wake, failure), "idle-owner");
        t.start();
        assertThat(idle.await(30, TimeUnit.SECONDS)).isTrue();
        final ThreadCache tc = a.registry.of(t);
        assertThat(tc.holdsAny()).as("the thread's cache after it freed everything").isTrue();
        a.trim();
        assertThat(a.stats().chunks()).as("chunks pinned by the idle thread's cache, before revocation").isEqualTo(1);

        for (int pass = 0; pass <= Reaper.IDLE_LOOKS; pass++) {
            a.reap();
        }
        assertThat(a.reaper.revocations).as("caches of idle live threads emptied").isEqualTo(1);
        assertThat(tc.holdsAny()).as("the idle thread's cache after revocation").isFalse();
        a.checkInvariants();
        a.trim();
        assertThat(a.stats().chunks()).as("chunks after revocation and trim (nothing is live)").isZero();

        wake.countDown();
        t.join(30_000);
        assertThat(failure.get()).isNull();
        assertThat(tc.revoked()).as("revoked after the thread's next call").isFalse();
        a.checkInvariants();
        assertThat(a.stats().liveBuffers()).isZero();
    }

    /** A thread blocked inside a call into kmem4j (here on a cache lock, in a refill) is not revoked. */
    @Test
    void aThreadInsideKmem4jKeepsItsCache() throws Exception {
        final int other = a.classes.indexOf(256);
        final CountDownLatch churned = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread t = new Thread(io.kmem4j.testing.Churn.thenOne(a, 100, SIZE, churned, go, 256, failure), "inside-kmem4j");
        final SlabCache locked = a.cache(other);
        locked.lock.lock();
        try {
            t.start();
            assertThat(churned.await(30, TimeUnit.SECONDS)).isTrue();
            go.countDown();
            Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(locked.lock::hasQueuedThreads);
            final ThreadCache tc = a.registry.of(t);
            // on a thread of its own: a revocation that went on would wait for the cache lock held here
            final java.util.concurrent.FutureTask<Boolean> revoke = new java.util.concurrent.FutureTask<>(() -> a.reaper.revoke(tc));
            new Thread(revoke, "revoker").start();
            assertThat(revoke.get(30, TimeUnit.SECONDS)).as("revoking a thread waiting inside a refill").isFalse();
            assertThat(tc.revoked()).isFalse();
            assertThat(tc.holdsAny()).as("its cache, kept").isTrue();
        } finally {
            locked.lock.unlock();
        }
        t.join(30_000);
        assertThat(failure.get()).isNull();
        a.checkInvariants();
    }

}
