package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The frees GC drives reach their owners in batches, one CAS per batch (issue 14): the JDK's GC
 * cleaner thread batches them per owner as any thread freeing another's memory does
 * ({@link RemoteBatches}), and, having no slow path of its own, has its partial batches handed over by
 * {@link Reaper#flushGcBatches()}, which it never waits for. Real collections, the JDK's own cleaner
 * thread; the reaper's interval is long, so only the test flushes.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a batch handed over twice would make an inbox's chain a cycle
class GcBatchesTest {
    private static final int SIZE = 256;
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Allocates on a thread of its own that then stays alive and idle (its inbox is not drained). */
    private static final class Owner implements AutoCloseable {
        final List<ByteBuffer> buffers = new ArrayList<>();
        private final Thread thread;
        private final CountDownLatch done = new CountDownLatch(1);
        private final CountDownLatch allocated = new CountDownLatch(1);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Owner(final SlabAllocator a, final int n) throws InterruptedException {
            this(a, n, true);
        }

        /** @param allOwned every buffer must come from the owner's frozen slab (n fits in one slab) */
        Owner(final SlabAllocator a, final int n, final boolean allOwned) throws InterruptedException {
            thread = new Thread(() -> {
                try {
                    for (long i = 0; i <= Refill.FREEZE_AFTER_ALLOCATIONS; i++) {
                        a.free(a.allocateExplicit(SIZE)); // enough allocations to freeze a slab of its own
                    }
                    for (int i = 0; i < n; i++) {
                        buffers.add(a.allocate(SIZE));
                    }
                } catch (final Throwable t) {
                    failure.set(t);
                } finally {
                    allocated.countDown();
                }
                try {
                    done.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "owner");
            thread.start();
            assertThat(allocated.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(failure.get()).isNull();
            if (allOwned) {
                assertThat(ownedHere(a)).as("of a slab the owner keeps frozen: their GC frees go to the owner").isEqualTo(n);
            }
        }

        ThreadCache cache(final SlabAllocator a) {
            return a.registry.of(thread);
        }

        /** @return how many of the buffers kept are of a slab this owner has frozen (their GC frees come to it) */
        long ownedHere(final SlabAllocator a) {
            final ThreadCache tc = cache(a);
            return buffers.stream().filter(b -> {
                final Slab slab = a.pages.slabOf(TestSupport.address(b));
                return slab.chunk.ownerAcquire(slab.headPage) == tc.id;
            }).count();
        }

        @Override
        public void close() throws InterruptedException {
            done.countDown();
            thread.join(30_000);
        }
    }

    /** The reaper's passes a minute apart: within a test, only the test flushes. */
    private static SlabAllocator allocator() {
        return new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
    }

    private static int inboxCount(final ThreadCache tc) {
        return inboxCount(tc.inbox);
    }

    private static int inboxCount(final RemoteInbox inbox) {
        final int[] n = new int[1];
        inbox.forEach(a -> n[0]++);
        return n[0];
    }

    private static void collectUntil(final SlabAllocator a, final long gcFrees) {
        Awaitility.await().atMost(WAIT).until(() -> {
            System.gc();
            return a.stats().gcFrees() >= gcFrees;
        });
    }

    @Test
    void theGcCleanerThreadHandsFullBatchesOverAtOnceAndPartialOnesWhenFlushed() throws Exception {
        try (SlabAllocator a = allocator();
             Owner o = new Owner(a, 40)) {
            final ThreadCache owner = o.cache(a);
            final ThreadCache gc = a.registry.gc;
            o.buffers.clear();
            collectUntil(a, 40);
            // one full batch of 32 in the owner's inbox, the other 8 still with the GC cleaner thread
            Awaitility.await().atMost(WAIT).until(() -> inboxCount(owner) == 32 && gc.pendingOutgoing() == 8);
            assertThat(gc.batchingThread).as("the thread that ran the cleaners").isNotNull()
                .isNotSameAs(Thread.currentThread());
            final long sent = a.stats().remoteFreesSent();

            // the cleaner thread is idle (outside kmem4j) now: a flush hands the partial batch over
            Awaitility.await().atMost(WAIT).until(a.reaper::flushGcBatches);
            assertThat(gc.pendingOutgoing()).isZero();
            assertThat(inboxCount(owner)).isEqualTo(40);
            assertThat(a.stats().remoteFreesSent()).isEqualTo(sent);
            assertThat(a.reaper.flushGcBatches()).as("nothing freed since: no handshake, nothing to do").isTrue();
        }
    }

    @Test
    void whileAFlushRunsTheGcCleanerThreadPushesEachFreeAndNeverWaits() throws Exception {
        try (SlabAllocator a = allocator();
             Owner o = new Owner(a, 45)) {
            final ThreadCache owner = o.cache(a);
            final ThreadCache gc = a.registry.gc;
            final List<ByteBuffer> later = new ArrayList<>(o.buffers.subList(40, 45));
            o.buffers.subList(40, 45).clear();
            o.buffers.subList(0, 3).clear(); // 3 frees: they stay batched, binding the cleaner thread first
            collectUntil(a, 3);
            Awaitility.await().atMost(WAIT).until(() -> gc.pendingOutgoing() == 3);
            assertThat(inboxCount(owner)).isZero();

            assertThat(gc.beginRevocation()).as("a flush under way").isTrue();
            try {
                later.clear();
                collectUntil(a, 8);
                // the 5 frees during the flush went straight to the inbox; the batch was not touched
                Awaitility.await().atMost(WAIT).until(() -> inboxCount(owner) == 5);
                assertThat(gc.pendingOutgoing()).isEqualTo(3);
            } finally {
                gc.endRevocation(false);
            }
            Awaitility.await().atMost(WAIT).until(a.reaper::flushGcBatches);
            assertThat(inboxCount(owner)).isEqualTo(8);
        }
    }

    @Test
    void anotherThreadOnTheGcCleanersCacheIsNeverBatched() throws Exception {
        try (SlabAllocator a = allocator();
             Owner o = new Owner(a, 40)) {
            final ThreadCache owner = o.cache(a);
            final ThreadCache gc = a.registry.gc;
            o.buffers.remove(0);
            collectUntil(a, 1); // binds the JDK's cleaner thread
            Awaitility.await().atMost(WAIT).until(() -> gc.batchingThread != null && gc.pendingOutgoing() == 1);
            final int before = inboxCount(owner) + gc.pendingOutgoing();
            a.registry.bindCurrent(gc); // this thread shares the GC cleaner thread's cache, as a second cleaner thread would
            try {
                TestSupport.invokeCleaner(o.buffers.remove(0));
            } finally {
                a.registry.bindCurrent(null);
            }
            assertThat(inboxCount(owner) + gc.pendingOutgoing()).isEqualTo(before + 1);
            assertThat(inboxCount(owner)).as("pushed at once, not into the cleaner thread's batch").isEqualTo(1);
            assertThat(gc.pendingOutgoing()).isEqualTo(1);
        }
    }

    /**
     * Exactly once under a race: five owners (more than a cleaner thread's batch slots, so batches are
     * handed over early too) drop buffers while another thread flushes the cleaner thread's batches in a
     * loop; every free arrives once (the accounting equations count what waits in batches and inboxes).
     */
    @Test
    void everyGcFreeArrivesOnceWhileFlushesRace() throws Exception {
        final int owners = 5;
        final int perOwner = 3_000;
        try (SlabAllocator a = allocator()) {
            final List<Owner> os = new ArrayList<>();
            final AtomicBoolean stop = new AtomicBoolean();
            final Thread flusher = new Thread(() -> {
                while (!stop.get()) {
                    a.reaper.flushGcBatches();
                    try {
                        Thread.sleep(1);
                    } catch (final InterruptedException e) {
                        return;
                    }
                }
            }, "flusher");
            try {
                for (int i = 0; i < owners; i++) {
                    os.add(new Owner(a, perOwner, false)); // full slabs unfreeze: their frees go to the orphans
                }
                flusher.start();
                for (final Owner o : os) {
                    o.buffers.clear();
                }
                collectUntil(a, (long) owners * perOwner);
                stop.set(true);
                flusher.join(30_000);
                Awaitility.await().atMost(WAIT).until(a.reaper::flushGcBatches);
                assertThat(a.registry.gc.pendingOutgoing()).isZero();
                int arrived = 0;
                for (final Owner o : os) {
                    arrived += inboxCount(o.cache(a));
                }
                assertThat(arrived + inboxCount(a.remote.orphans)).isEqualTo(owners * perOwner);
                assertThat(a.reaper.gcFlushes).as("flushes that handed batches over").isPositive();
                a.checkInvariants();
            } finally {
                stop.set(true);
                for (final Owner o : os) {
                    o.close();
                }
            }
        }
    }
}
