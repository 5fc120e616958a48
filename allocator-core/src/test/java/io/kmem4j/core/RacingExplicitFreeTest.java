package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.Test;

/**
 * Two threads {@code free()} the same explicit buffers at the same moment while freed blocks go back
 * to their slab's bitmap at once (one-round magazines, no depot): the loser of a race may find the block
 * already free in its slab when it checks that the buffer is one of ours. It must count a double free,
 * as for any racing second {@code free()}, not refuse the buffer as foreign. Found by
 * {@link AllocatorStressTest}'s racing releases in debug mode after {@code free()} began to check the
 * bitmap ({@link Slab#mayBeHandedOut}); this test makes the window wide: every buffer is raced, and the
 * winner's free usually flushes to the slab.
 */
class RacingExplicitFreeTest {
    @Test
    void freeOnceTellsWhetherThisCallReleasedTheBuffer() {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults());
        try {
            final ByteBuffer explicit = a.allocateExplicit(100);
            assertThat(a.freeOnce(explicit)).isTrue();
            assertThat(a.freeOnce(explicit)).as("already released").isFalse();
            assertThat(a.stats().doubleFrees()).isEqualTo(1);
            assertThat(a.freeOnce(a.allocate(100))).as("a tracked buffer: its cleaner was invoked").isTrue();
        } finally {
            a.close();
        }
    }

    @Test
    void aRacingSecondFreeIsCountedEvenWhenTheBlockIsAlreadyBackInItsSlab() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().magazineRounds(1).depotMagazines(0)
            .reapIntervalMillis(60_000).build());
        try {
            final int rounds = 4_000;
            final int batch = 256;
            final ByteBuffer[] buffers = new ByteBuffer[batch];
            final CyclicBarrier barrier = new CyclicBarrier(2);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final LongAdder refused = new LongAdder();
            final Thread owner = new Thread(() -> race(a, buffers, rounds, barrier, true, refused, failure), "owner");
            final Thread other = new Thread(() -> race(a, buffers, rounds, barrier, false, refused, failure), "other");
            owner.start();
            other.start();
            owner.join();
            other.join();
            assertThat(failure.get()).isNull();
            final AllocatorStats s = a.stats();
            assertThat(refused.sum()).as("racing second frees refused as foreign buffers").isZero();
            assertThat(s.explicitFrees()).as("each buffer freed once").isEqualTo((long) rounds * batch);
            assertThat(s.doubleFrees()).as("each racing second free counted").isEqualTo((long) rounds * batch);
            assertThat(s.liveBuffers()).isZero();
            a.reap();
            a.checkInvariants();
        } finally {
            a.close();
        }
    }

    /**
     * Each round: the owner fills {@code buffers} with new explicit buffers; then both threads, released
     * together, free all of them in the same order.
     */
    private static void race(final SlabAllocator a, final ByteBuffer[] buffers, final int rounds,
                             final CyclicBarrier barrier, final boolean owner, final LongAdder refused,
                             final AtomicReference<Throwable> failure) {
        try {
            for (int r = 0; r < rounds; r++) {
                if (owner) {
                    for (int i = 0; i < buffers.length; i++) {
                        buffers[i] = a.allocateExplicit(64);
                    }
                }
                barrier.await(30, TimeUnit.SECONDS);
                for (final ByteBuffer b : buffers) {
                    try {
                        a.free(b);
                    } catch (final IllegalArgumentException e) {
                        refused.increment();
                    }
                }
                barrier.await(30, TimeUnit.SECONDS);
            }
        } catch (final Throwable t) {
            failure.compareAndSet(null, t);
            barrier.reset();
        }
    }
}
