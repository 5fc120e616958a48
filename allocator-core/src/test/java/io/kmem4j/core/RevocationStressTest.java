package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * Owners that pause often while reaper passes run back to back: thousands of revocations, each
 * racing an owner's return. No buffer handed to two owners (tags), the accounting invariants hold,
 * no failure inside kmem4j. Virtual threads on 21+ too (carriers are never revoked). 3 s by default;
 * {@code -Dkmem4j.revocationStressSeconds=N} for longer (the stress profile: 60 s).
 */
class RevocationStressTest {
    @Test
    void ownersAndBackToBackPasses() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        a.reaper.idleNanos = 0; // a pass revokes what the previous pass found idle
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final ConcurrentLinkedQueue<ByteBuffer> exchange = new ConcurrentLinkedQueue<>();
        final AtomicLong ops = new AtomicLong();
        final List<Thread> ts = new ArrayList<>();
        final long seconds = Long.getLong("kmem4j.revocationStressSeconds", 3);
        try {
            for (int i = 0; i < 3; i++) {
                final Thread t = new Thread(io.kmem4j.testing.PausingOwner.owner(a, 42 + i, stop, exchange, failure, ops), "owner-" + i);
                ts.add(t);
                t.start();
            }
            if (Runtime.version().feature() >= 21) {
                for (int i = 0; i < 8; i++) {
                    final Runnable work = io.kmem4j.testing.PausingOwner.owner(a, 100 + i, stop, exchange, failure, ops);
                    final Thread t = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, work);
                    ts.add(t);
                }
            }
            final long end = System.nanoTime() + seconds * 1_000_000_000L;
            long passes = 0;
            while (System.nanoTime() < end && !stop.get()) {
                a.reap();
                passes++;
                if (passes % 500 == 0) {
                    a.trim();
                }
            }
            stop.set(true);
            for (final Thread t : ts) {
                t.join(30_000);
            }
            System.out.println("[revocation stress] passes " + passes + " revocations " + a.reaper.revocations
                + " owner rounds " + ops.get());
            assertThat(failure.get()).isNull();
            assertThat(a.reaper.revocations).as("revocations in %d passes", passes).isPositive();
            a.checkInvariants();
            assertThat(a.stats().hookFailures()).isZero();
            assertThat(a.stats().allocationFailures()).isZero();
        } finally {
            stop.set(true);
            a.close();
        }
    }
}
