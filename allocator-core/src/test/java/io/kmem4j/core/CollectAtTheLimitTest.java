package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * kmem4j's chunks fill the direct-memory budget with buffers the program dropped, and the request
 * would not fit on the JDK's path either: the allocator reclaims as the JDK's {@code Bits} would
 * ({@link AtTheLimit}: reference processing, one shared collection, a back-off) and serves the
 * request from what GC gave back, instead of passing it to the JDK's path, whose loop would collect
 * and then wait for memory to come back to the JDK's account, which kmem4j's frees never do, and
 * throw an {@code OutOfMemoryError} the JDK alone would not have thrown.
 */
class CollectAtTheLimitTest {
    private static final int SIZE = 4096;

    @Test
    void droppedBuffersFillingTheBudgetAreCollectedAndServedAgain() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            // one chunk of our own, then nothing more under the limit than less than one chunk
            final ByteBuffer first = a.allocate(SIZE);
            assertThat(a.owns(first)).isTrue();
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2); // the JDK's path could not serve a request either
            final long perChunk = a.stats().bytesReserved() / SIZE;
            final long fallbacksBefore = a.stats().fallbacks();
            final long gcFreesBefore = a.stats().gcFrees();
            // three times what the chunk holds, each buffer dropped at once: only GC can give their memory back
            final long n = 3 * perChunk;
            int served = 0;
            for (long i = 0; i < n; i++) {
                final ByteBuffer b = a.tryAllocate(SIZE);
                if (b != null) {
                    served++;
                    b.putLong(0, i);
                }
            }
            assertThat(a.stats().chunks()).as("chunks: the budget allows no second one").isEqualTo(1);
            assertThat(a.stats().gcFrees() - gcFreesBefore).as("buffers GC gave back to kmem4j").isPositive();
            assertThat(served).as("buffers served from kmem4j's one chunk of %d objects, each dropped at once (fallbacks %d)",
                perChunk, a.stats().fallbacks() - fallbacksBefore).isEqualTo((int) n);
        } finally {
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }

    /**
     * Four threads drop buffers into one chunk at an exhausted budget: every request is served. Before,
     * a collection was asked for at most every 100 ms, and the requests in between went to the JDK's
     * path, which (in a program) collected, waited its half second and threw: a program dropping
     * 16 KiB buffers on four threads at {@code MaxDirectMemorySize=64m} died in one run of three.
     */
    @Test
    void threadsMeetingTheLimitTogetherAreAllServed() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            a.free(a.allocateExplicit(SIZE)); // one chunk of our own
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2);
            final long perChunk = a.stats().bytesReserved() / SIZE;
            final int threads = 4;
            final long each = perChunk; // together four times what the chunk holds
            final AtomicInteger outOfMemory = new AtomicInteger();
            final AtomicInteger servedByKmem4j = new AtomicInteger();
            final CyclicBarrier go = new CyclicBarrier(threads);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final Thread th = new Thread(() -> {
                    try {
                        go.await(30, TimeUnit.SECONDS);
                        for (long i = 0; i < each; i++) {
                            try {
                                final ByteBuffer b = a.allocate(SIZE); // kmem4j's, or the JDK's path's
                                b.putLong(0, i);
                                if (a.owns(b)) {
                                    servedByKmem4j.incrementAndGet();
                                }
                            } catch (final OutOfMemoryError e) {
                                outOfMemory.incrementAndGet();
                            }
                        }
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "at-the-limit-" + t);
                ts.add(th);
                th.start();
            }
            for (final Thread th : ts) {
                th.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(outOfMemory.get()).as("OutOfMemoryErrors of %d threads x %d requests, each buffer dropped at once"
                + " (served by kmem4j: %d)", threads, each, servedByKmem4j.get()).isZero();
            assertThat(servedByKmem4j.get()).as("served by kmem4j").isGreaterThan((int) (2 * perChunk));
        } finally {
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }

    /**
     * Buffers another thread drops after a request's collection has passed, while the request backs
     * off, are found by one last collection before the request would go to the JDK's path (whose own
     * collection would send them to kmem4j and throw). Before, the request gave up after its back-off:
     * in CI one request of four threads' 4,100 got an {@code OutOfMemoryError}, the other threads
     * having taken what the first collection gave back, dropped it, and ended.
     */
    @Test
    void buffersDroppedWhileARequestBacksOffServeIt() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        final AtomicReference<List<ByteBuffer>> held = new AtomicReference<>(new ArrayList<>());
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread dropper = null;
        try {
            a.free(a.allocateExplicit(SIZE)); // one chunk of our own
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2);
            for (;;) { // the chunk full of live buffers: the last request reclaims in vain
                final ByteBuffer b = a.tryAllocate(SIZE);
                if (b == null) {
                    break;
                }
                held.get().add(b);
            }
            final int heldBuffers = held.get().size();
            assertThat(heldBuffers).as("buffers live in the chunk").isPositive();
            final long before = ReferenceProcessing.collectionsStarted();
            dropper = new Thread(() -> {
                try {
                    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (ReferenceProcessing.collectionsStarted() == before) { // the request's collection
                        if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("the request at the limit started no collection in 60 s");
                        }
                        Thread.sleep(1);
                    }
                    ReferenceProcessing.awaitRunningCollection(null); // has passed: the buffers were still live
                    held.set(null); // dropped while the request backs off
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "drops-during-the-back-off");
            dropper.start();
            final ByteBuffer b = a.tryAllocate(SIZE);
            dropper.join(TimeUnit.SECONDS.toMillis(90));
            assertThat(dropper.isAlive()).as("the dropper ended").isFalse();
            assertThat(failure.get()).isNull();
            assertThat(b).as("a request at the limit after %d buffers were dropped during its back-off (collections run: %d)",
                heldBuffers, ReferenceProcessing.collectionsStarted() - before).isNotNull();
            assertThat(a.owns(b)).isTrue();
        } finally {
            held.set(null);
            if (dropper != null) {
                dropper.interrupt();
                dropper.join(TimeUnit.SECONDS.toMillis(90));
            }
            giveBack(a, take);
        }
    }

    /**
     * GC sends a collected buffer to the thread whose slab it came from. When that thread has stopped
     * allocating, a request at the limit on another thread takes those frees in: without it they sat
     * in the idle thread's inbox while the request failed (CI, once in about 20 runs of the test above).
     */
    @Test
    void freesGcSentToAThreadThatStoppedAllocatingServeAnotherAtTheLimit() throws Exception {
        servedFromAnotherThreadsFrees(false);
    }

    /** The same for a thread on the shared cache (a virtual thread's tier): one free taken per request. */
    @Test
    void freesGcSentToAThreadThatStoppedAllocatingServeTheSharedCacheAtTheLimit() throws Exception {
        servedFromAnotherThreadsFrees(true);
    }

    private static void servedFromAnotherThreadsFrees(final boolean sharedCache) throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        final Steps steps = new Steps();
        final AtomicInteger heldByTheOther = new AtomicInteger();
        final List<ByteBuffer> live = new ArrayList<>();
        final Thread other = new Thread(() -> {
            try {
                for (long i = 0; i <= Refill.FREEZE_AFTER_ALLOCATIONS; i++) {
                    a.free(a.allocateExplicit(SIZE)); // enough allocations to freeze a slab of its own
                }
                List<ByteBuffer> mine = new ArrayList<>();
                for (int i = 0; i < 9; i++) { // from the slab this thread froze: their frees go back to it
                    final ByteBuffer b = a.allocate(SIZE);
                    if (a.owns(b)) {
                        mine.add(b);
                    }
                }
                heldByTheOther.set(mine.size());
                steps.holding.countDown();
                steps.drop.await(60, TimeUnit.SECONDS);
                mine = null; // dropped: only GC gives them back, and it sends them to this thread
                steps.dropped.countDown();
                steps.done.await(60, TimeUnit.SECONDS); // alive, allocating nothing more
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stopped-allocating");
        try {
            a.free(a.allocateExplicit(SIZE)); // one chunk of our own
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2);
            other.start();
            assertThat(steps.holding.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(heldByTheOther.get()).as("buffers the other thread holds").isEqualTo(9);
            fillTheChunkThenLetTheOtherDrop(a, live, steps.drop, steps.dropped);
            final long chunkObjects = a.stats().bytesReserved() / SIZE;
            assertThat(live.size()).as("live here, of %d in the chunk", chunkObjects).isGreaterThan(0);
            if (sharedCache) {
                a.registry.bindCurrent(a.registry.shared);
            }
            int served = 0;
            for (int i = 0; i < 9; i++) {
                final ByteBuffer b = a.tryAllocate(SIZE);
                if (b != null) {
                    live.add(b);
                    served++;
                }
            }
            assertThat(served).as("requests at the limit served from what GC sent to the other thread").isEqualTo(9);
            assertThat(a.stats().chunks()).isEqualTo(1);
        } finally {
            endOther(other, steps.drop, steps.done);
            giveBack(a, take);
        }
    }

    /**
     * A request at the limit takes only frees of its own size class from other threads: the owner's
     * frees of other classes stay in its inbox for its own slow path (a review found that taking all of
     * them stranded them in the taker's magazines).
     */
    @Test
    void onlyFreesOfTheClassAskedForAreTakenFromAnotherThread() throws Exception {
        final int small = 1024;
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        final Steps steps = new Steps();
        final AtomicReference<ThreadCache> otherCache = new AtomicReference<>();
        final List<ByteBuffer> live = new ArrayList<>();
        final Thread other = new Thread(() -> {
            try {
                for (long i = 0; i <= Refill.FREEZE_AFTER_ALLOCATIONS; i++) { // a frozen slab of each class
                    a.free(a.allocateExplicit(SIZE));
                    a.free(a.allocateExplicit(small));
                }
                List<ByteBuffer> mine = new ArrayList<>();
                for (int i = 0; i < 9; i++) {
                    mine.add(a.allocate(SIZE));
                    mine.add(a.allocate(small));
                }
                otherCache.set(a.registry.current());
                steps.holding.countDown();
                steps.drop.await(60, TimeUnit.SECONDS);
                mine = null; // dropped: GC sends their frees to this thread
                steps.dropped.countDown();
                steps.done.await(60, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stopped-allocating-two-classes");
        try {
            a.free(a.allocateExplicit(SIZE));
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2);
            other.start();
            assertThat(steps.holding.await(30, TimeUnit.SECONDS)).isTrue();
            fillTheChunkThenLetTheOtherDrop(a, live, steps.drop, steps.dropped);
            final RemoteInbox inbox = otherCache.get().inbox;
            final int smallClass = a.classes.indexOf(small);
            org.awaitility.Awaitility.await("GC sent the 18 frees to their owner").atMost(java.time.Duration.ofSeconds(30))
                .pollInterval(java.time.Duration.ofMillis(10))
                .until(() -> {
                    System.gc();
                    ReferenceProcessing.help(null);
                    a.reaper.flushGcBatches(); // the last frees wait in the GC cleaner thread's batch (reaper: 60 s)
                    return count(a, inbox, smallClass) >= 9 && count(a, inbox, a.classes.indexOf(SIZE)) >= 9;
                });
            for (int i = 0; i < 9; i++) {
                final ByteBuffer b = a.tryAllocate(SIZE);
                assertThat(b).as("request %d at the limit", i).isNotNull();
                live.add(b);
            }
            assertThat(count(a, inbox, smallClass)).as("the owner's %d B frees, still in its inbox", small).isEqualTo(9);
            assertThat(count(a, inbox, a.classes.indexOf(SIZE))).as("its %d B frees, taken", SIZE).isZero();
        } finally {
            endOther(other, steps.drop, steps.done);
            giveBack(a, take);
        }
    }

    /** The steps of a test with another thread: it holds buffers, drops them when told, and ends when done. */
    private static final class Steps {
        final java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch drop = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch dropped = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    }

    /** Lets the other thread run to its end and waits for it. */
    private static void endOther(final Thread other, final java.util.concurrent.CountDownLatch... latches)
        throws InterruptedException {
        for (final java.util.concurrent.CountDownLatch l : latches) {
            l.countDown();
        }
        other.join();
    }

    /** The budget the test took, back to the JDK's account; the allocator closed. */
    /**
     * A request above the largest size class goes to the JDK's path; when it does not fit, the chunks
     * of buffers the program dropped to GC must not keep the room it needs: the JDK's reservation
     * would collect, the buffers would come back to kmem4j's slabs and their chunks stay reserved
     * (trial: 55 buffers of 1 MiB under a 64 MiB limit after 2,000 dropped 4 KiB ones, 64 without
     * the agent).
     */
    @Test
    void aRequestAboveTheLargestClassGetsTheChunksOfBuffersDroppedToGc() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            final List<ByteBuffer> dropped = trackedBuffers(a, 2_000); // only GC gives them back
            final long reserved = a.stats().bytesReserved();
            assertThat(reserved).as("chunks of the buffers to drop").isPositive();
            final int big = 1 << 20;
            take = TestSupport.exhaustBudgetLeaving(big / 2);
            dropped.clear();
            assertThat(JdkInternals.fitsUnderTheLimit(big)).as("1 MiB fits before the request").isFalse();
            assertThat(a.tryAllocate(big)).as("above the largest class: the JDK's path serves it").isNull();
            assertThat(JdkInternals.fitsUnderTheLimit(big)).as("1 MiB fits when the JDK's path runs; bytes reserved by kmem4j %d",
                a.stats().bytesReserved()).isTrue();
            assertThat(a.stats().bytesReserved()).as("chunk memory after the request").isLessThan(reserved);
        } finally {
            giveBack(a, take);
        }
    }

    /**
     * The reclaim for a large request runs only where it can help and at most once in
     * {@link Reaper#RELIEF_HOLD_NANOS} after it did not: kmem4j's buffers live (not garbage), a program
     * retrying requests that never fit pays the JDK's cost, not a collection and a back-off of
     * kmem4j's as well (review finding).
     */
    @Test
    void aLargeRequestKmem4jCannotHelpDoesNotCollectAgainAndAgain() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            final List<ByteBuffer> live = trackedBuffers(a, 2_000);
            final int big = 1 << 20;
            take = TestSupport.exhaustBudgetLeaving(big / 2);
            final long first = ReferenceProcessing.collectionsStarted();
            assertThat(a.tryAllocate(big)).isNull();
            assertThat(ReferenceProcessing.collectionsStarted()).as("the first request reclaims").isGreaterThan(first);
            assertThat(JdkInternals.fitsUnderTheLimit(big)).as("nothing to reclaim: the buffers are live").isFalse();
            final long second = ReferenceProcessing.collectionsStarted();
            assertThat(a.tryAllocate(big)).isNull();
            assertThat(ReferenceProcessing.collectionsStarted()).as("the next one, within the hold-off, does not").isEqualTo(second);
            assertThat(live).hasSize(2_000); // live until here
        } finally {
            giveBack(a, take);
        }
    }

    /** @return {@code n} tracked buffers of {@link #SIZE} (GC-driven release), about 8 MB for 2,000 */
    private static List<ByteBuffer> trackedBuffers(final SlabAllocator a, final int n) {
        final List<ByteBuffer> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add(a.allocate(SIZE));
        }
        return l;
    }

    private static void giveBack(final SlabAllocator a, final long take) {
        if (take > 0) {
            JdkInternals.unreserveDirectMemory(take);
        }
        a.close();
    }

    /**
     * The rest of the chunk held live in {@code live} (the last request reclaims in vain: all is live),
     * then the other thread drops what it holds.
     */
    private static void fillTheChunkThenLetTheOtherDrop(final SlabAllocator a, final List<ByteBuffer> live,
                                                        final java.util.concurrent.CountDownLatch drop,
                                                        final java.util.concurrent.CountDownLatch dropped)
        throws InterruptedException {
        for (;;) {
            final ByteBuffer b = a.tryAllocate(SIZE);
            if (b == null) {
                break;
            }
            live.add(b);
        }
        drop.countDown();
        assertThat(dropped.await(30, TimeUnit.SECONDS)).isTrue();
    }

    /** Frees of size class {@code cls} waiting in {@code inbox} (the owner is parked: nothing takes them meanwhile but this test's requests). */
    private static int count(final SlabAllocator a, final RemoteInbox inbox, final int cls) {
        final int[] n = new int[1];
        inbox.forEach(address -> {
            if (a.pages.cacheOf(address).classIndex == cls) {
                n[0]++;
            }
        });
        return n[0];
    }

    /** Waiting at the limit defers an interrupt, as the JDK's {@code Bits.reserveMemory} does: served, and still interrupted. */
    @Test
    void anInterruptedThreadIsServedAndKeepsItsInterruptStatus() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            a.free(a.allocateExplicit(SIZE));
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2);
            final long perChunk = a.stats().bytesReserved() / SIZE;
            final AtomicInteger served = new AtomicInteger();
            final AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
            final Thread t = new Thread(() -> {
                Thread.currentThread().interrupt();
                for (long i = 0; i < 2 * perChunk; i++) {
                    if (a.tryAllocate(SIZE) != null) {
                        served.incrementAndGet();
                    }
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }, "interrupted");
            t.start();
            t.join();
            assertThat(served.get()).as("served of %d dropped buffers", 2 * perChunk).isEqualTo((int) (2 * perChunk));
            assertThat(stillInterrupted.get()).as("interrupt status after the waits").isTrue();
        } finally {
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }

    /**
     * No chunk fits but the request fits on the JDK's path (a small limit, or a chunk larger than what
     * is left): it goes there at once, with no collection and no trim, as the JDK would serve it.
     * Before, every such request trimmed the allocator first (6-17x slower than the JDK at small limits).
     */
    @Test
    void aRequestTheJdkCanServeWithoutReclaimingGoesThereAtOnce() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            final List<ByteBuffer> live = new ArrayList<>();
            live.add(a.allocate(SIZE)); // one chunk of our own
            take = TestSupport.exhaustBudgetLeaving(64 * SIZE); // less than a chunk, more than requests
            final long perChunk = a.stats().bytesReserved() / SIZE;
            for (long i = 1; i < perChunk; i++) {
                live.add(a.allocate(SIZE)); // the chunk full of live buffers
            }
            final long collections = ReferenceProcessing.collectionsStarted();
            final long trims = a.stats().trims();
            int toTheJdk = 0;
            for (int i = 0; i < 16; i++) {
                if (a.tryAllocate(SIZE) == null) {
                    toTheJdk++;
                }
            }
            assertThat(toTheJdk).as("requests the JDK's path serves").isEqualTo(16);
            assertThat(ReferenceProcessing.collectionsStarted()).as("collections asked for").isEqualTo(collections);
            assertThat(a.stats().trims()).as("trims").isEqualTo(trims);
            assertThat(live).hasSize((int) perChunk);
        } finally {
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }
}
