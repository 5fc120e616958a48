package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.checkPattern;
import static io.kmem4j.core.TestSupport.invokeCleaner;
import static io.kmem4j.core.TestSupport.writePattern;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Threads that free other threads' buffers and threads that die (cases C5, C12): nothing is lost,
 * caches do not grow with the number of threads ever created, and after the threads are gone and
 * the allocator is trimmed every chunk goes back.
 */
class ThreadLifecycleTest {
    private SlabAllocator allocator;

    @BeforeEach
    void create() {
        allocator = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0).reapIntervalMillis(50).build());
    }

    @AfterEach
    void close() {
        allocator.close();
    }

    private static Thread start(final String name, final Runnable r, final AtomicReference<Throwable> failure) {
        final Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
        t.start();
        return t;
    }

    /** After all threads that touched the allocator ended: adopt their caches, trim, expect nothing held. */
    private void assertEverythingReturns() {
        allocator.reap();
        allocator.checkInvariants();
        allocator.trim();
        final AllocatorStats s = allocator.stats();
        assertThat(s.liveBuffers()).isZero();
        assertThat(s.bytesInUse()).isZero();
        assertThat(s.hookFailures()).isZero();
        assertThat(s.threadCaches()).as("caches of dead threads adopted").isZero();
        assertThat(s.chunks()).as("every chunk returned to the JDK").isZero();
        assertThat(s.bytesReserved()).isZero();
        for (final CacheStats c : s.caches()) {
            assertThat(c.slabs()).as("slabs of %s", c.name()).isZero();
            assertThat(c.doubleFrees()).isZero();
        }
    }

    @Test
    void c12FreesFromAnotherThreadAreSentHomeAndNothingIsLost() throws Exception {
        final int n = 200_000;
        final BlockingQueue<ByteBuffer> queue = new ArrayBlockingQueue<>(256);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong corrupt = new AtomicLong();
        final Thread producer = start("producer", () -> {
            for (int i = 0; i < n; i++) {
                final ByteBuffer b = allocator.allocate(16 << 10);
                b.putLong(0, i);
                b.putLong(b.capacity() - 8, i);
                try {
                    queue.put(b);
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
        }, failure);
        final Thread consumer = start("consumer", () -> {
            for (int i = 0; i < n; i++) {
                final ByteBuffer b;
                try {
                    b = queue.poll(30, TimeUnit.SECONDS);
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                if (b.getLong(0) != i || b.getLong(b.capacity() - 8) != i) {
                    corrupt.incrementAndGet();
                }
                invokeCleaner(b);
            }
        }, failure);
        producer.join();
        consumer.join();
        assertThat(failure.get()).isNull();
        assertThat(corrupt.get()).isZero();
        final AllocatorStats s = allocator.stats();
        assertThat(s.allocations()).isEqualTo(n);
        assertThat(s.explicitFrees()).isEqualTo(n);
        assertThat(s.remoteFreesSent()).as("frees on the consumer go to the producer").isGreaterThan(0);
        assertThat(s.bytesReserved()).as("memory plateaus at the live set plus caches")
            .isLessThan(64L << 20);
        assertEverythingReturns();
    }

    @Test
    void c12ReleasesAfterTheOwnerEndedComeBack() throws Exception {
        final List<ByteBuffer> handed = new ArrayList<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread owner = start("owner", () -> {
            for (int i = 0; i < 1000; i++) {
                final ByteBuffer b = allocator.allocate(16 << 10);
                writePattern(b, i);
                handed.add(b);
            }
        }, failure);
        owner.join();
        allocator.reap(); // the owner's cache is adopted while its buffers are still live
        assertThat(allocator.stats().threadCaches()).isZero();
        final Thread releaser = start("releaser", () -> {
            for (int i = 0; i < handed.size(); i++) {
                assertThat(checkPattern(handed.get(i), i)).isEqualTo(-1);
                invokeCleaner(handed.get(i));
            }
        }, failure);
        releaser.join();
        assertThat(failure.get()).isNull();
        handed.clear();
        assertEverythingReturns();
    }

    @Test
    void c5aThreadChurnDoesNotGrowWithThreadsEverCreated() throws Exception {
        final List<ByteBuffer> holder = new ArrayList<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        long reservedAfter100 = 0;
        for (int t = 0; t < 1000; t++) {
            final Thread worker = start("worker-" + t, () -> {
                final List<ByteBuffer> mine = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    mine.add(allocator.allocate(16 << 10));
                }
                for (int i = 1; i < 10; i++) {
                    invokeCleaner(mine.get(i));
                }
                synchronized (holder) {
                    holder.add(mine.get(0));
                }
            }, failure);
            worker.join();
            if (t % 50 == 49) {
                // the holder releases later, on a thread of its own (which then ends too)
                start("holder-" + t, () -> {
                    synchronized (holder) {
                        holder.forEach(TestSupport::invokeCleaner);
                        holder.clear();
                    }
                }, failure).join();
                allocator.reap();
            }
            if (t == 99) {
                reservedAfter100 = allocator.stats().bytesReserved();
            }
        }
        assertThat(failure.get()).isNull();
        final AllocatorStats s = allocator.stats();
        assertThat(s.threadCachesRetired()).isEqualTo(1000 + 20);
        assertThat(s.bytesReserved()).as("plateau: no growth with the number of threads")
            .isLessThanOrEqualTo(reservedAfter100);
        assertEverythingReturns();
    }

    @Test
    void c5bCommonPoolTasksDoNotLeakThreadCaches() {
        final int parallelism = ForkJoinPool.commonPool().getParallelism();
        IntStream.range(0, 10_000).parallel().forEach(i -> {
            final ByteBuffer b = allocator.allocate(256 + (i % 4096));
            b.put(0, (byte) i);
            invokeCleaner(b);
        });
        final AllocatorStats s = allocator.stats();
        assertThat(s.allocations()).isEqualTo(10_000);
        assertThat(s.frees()).isEqualTo(10_000);
        assertThat(s.threadCaches()).as("one cache per worker thread, not per task")
            .isLessThanOrEqualTo(parallelism + 1);
        allocator.checkInvariants();
    }

    @Test
    void manyThreadsHoldingOneSmallBufferEachShareSlabs() throws Exception {
        final AllocatorStats s = threadsHoldingOneBufferEach(500, 100);
        // 500 live threads x one 100 B buffer: a frozen 64 KiB slab each would be 32 MiB in 8 chunks
        assertThat(s.chunks()).as("threads new to a class share slabs instead of freezing one each").isEqualTo(1);
    }

    /**
     * The same with 16 KiB buffers: a thread new to the class takes one object per refill from the
     * shared slabs, not eight, so what 300 threads hold is what they asked for (eight 16 KiB objects
     * each, the seven extra in their magazines, were 39 MB reserved in 10 chunks for 4.9 MB live).
     */
    @Test
    void manyThreadsHoldingOneMediumBufferEachReserveWhatTheyHold() throws Exception {
        final AllocatorStats s = threadsHoldingOneBufferEach(300, 16 << 10);
        assertThat(s.bytesInUse()).isEqualTo(300L * (16 << 10));
        assertThat(s.chunks()).as("chunks for 300 x 16 KiB live (4.9 MB); reserved %d B", s.bytesReserved())
            .isLessThanOrEqualTo(2);
        assertThat(Refill.sharedRefill(64)).isEqualTo(Refill.SHARED_REFILL);
        assertThat(Refill.sharedRefill(1024)).isEqualTo(4);
        assertThat(Refill.sharedRefill(4096)).isEqualTo(1);
        assertThat(Refill.sharedRefill(65536)).isEqualTo(1);
    }

    /**
     * Statistics read while the GC cleaner thread frees: its frees are counted once, in the total and in
     * gcFrees alike, so explicit frees (the difference) never go below what was freed explicitly (here
     * none). The GC thread's counting is played by a thread adding to its cache's counter as it does.
     */
    @Test
    void explicitFreesStayExactWhileTheGcThreadFrees() throws Exception {
        final ThreadCache gc = allocator.registry.gc;
        final int frees = ThreadCache.classBase(0) + ThreadCache.FREES;
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread cleaner = start("gc-frees", () -> {
            while (!stop.get()) {
                gc.stats[frees]++; // plain, owner only, as the GC thread counts
            }
        }, failure);
        try {
            for (int i = 0; i < 20_000; i++) {
                final AllocatorStats s = allocator.stats();
                assertThat(s.explicitFrees()).as("explicit frees in snapshot %d: %s frees, %s by GC", i, s.frees(),
                    s.gcFrees()).isZero();
            }
        } finally {
            stop.set(true);
            cleaner.join();
        }
        assertThat(failure.get()).isNull();
        gc.stats[frees] = 0; // no real buffer behind these
    }

    /** {@code threads} live threads, each holding one buffer of {@code size} bytes: the statistics then. */
    private AllocatorStats threadsHoldingOneBufferEach(final int threads, final int size) throws Exception {
        final List<ByteBuffer> held = java.util.Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> started = new ArrayList<>();
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            started.add(start("holder-" + t, () -> {
                held.add(allocator.allocate(size));
                try {
                    done.await();
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, failure));
        }
        while (held.size() < threads && failure.get() == null) {
            Thread.onSpinWait();
        }
        final AllocatorStats s = allocator.stats();
        done.countDown();
        for (final Thread t : started) {
            t.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(s.liveBuffers()).isEqualTo(threads);
        held.forEach(TestSupport::invokeCleaner);
        return s;
    }

    @Test
    void afterABurstOfThreadsEndsTheReaperGivesMemoryBackWithoutTrim() throws Exception {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < 200; t++) {
            start("burst-" + t, () -> {
                final List<ByteBuffer> mine = new ArrayList<>();
                for (int i = 0; i < 300; i++) {
                    mine.add(allocator.allocate(16 << 10)); // past the sharing threshold: frozen slabs
                }
                mine.forEach(TestSupport::invokeCleaner);
            }, failure).join();
        }
        assertThat(failure.get()).isNull();
        final long peakChunks = allocator.stats().chunksAllocated();
        allocator.reap(); // no trim: the reaper's own shrink after retiring the threads
        final AllocatorStats s = allocator.stats();
        assertThat(s.liveBuffers()).isZero();
        assertThat(s.chunks()).as("chunks held after the burst (of %d allocated)", peakChunks)
            .isLessThanOrEqualTo(allocator.config().retainedEmptyChunks());
    }

    /**
     * Threads that end faster than the reaper runs: a thread about to grow the page heap first empties
     * the caches of threads that ended (their frozen slabs and magazines), so the heap follows what is
     * live, not how many threads ended since the last pass. The reaper is kept out (60 s interval).
     */
    @Test
    void threadsThatEndedGiveTheirSlabsBackBeforeTheHeapGrows() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        try {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < 100; t++) {
                start("short-" + t, () -> {
                    final List<ByteBuffer> mine = new ArrayList<>();
                    for (int i = 0; i < 300; i++) {
                        mine.add(a.allocate(16 << 10)); // past the sharing threshold: frozen slabs
                    }
                    mine.forEach(TestSupport::invokeCleaner);
                }, failure).join();
            }
            assertThat(failure.get()).isNull();
            final AllocatorStats s = a.stats();
            assertThat(s.liveBuffers()).isZero();
            // one thread's 300 x 16 KiB is 4.7 MiB: two 4 MiB chunks, plus what the last thread still holds
            assertThat(s.chunksAllocated()).as("chunks ever reserved for 100 threads that ended one after another")
                .isLessThanOrEqualTo(4);
        } finally {
            a.close();
        }
    }

    /**
     * The thread about to grow never waits for the reap lock: while a pass holds it (here a stand-in),
     * it grows instead, and the ended threads' caches stay for the pass to retire (StormIT caught a
     * storm thread queued on that lock, JDK 27).
     */
    @Test
    void aThreadAboutToGrowNeverWaitsForAPassUnderWay() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        final java.util.concurrent.locks.ReentrantLock reapLock =
            (java.util.concurrent.locks.ReentrantLock) RevocationRaceTest.field(a.reaper, "reapLock");
        final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        final Thread pass = new Thread(() -> {
            reapLock.lock();
            try {
                held.countDown();
                done.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                reapLock.unlock();
            }
        }, "pass-under-way");
        try {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            start("short", () -> a.allocate(16 << 10), failure).join(); // ends holding a frozen slab
            assertThat(failure.get()).isNull();
            pass.start();
            assertThat(held.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            final List<ByteBuffer> mine = new ArrayList<>();
            final long before = a.stats().chunksAllocated();
            final Thread grower = start("grower", () -> {
                while (a.stats().chunksAllocated() == before) {
                    mine.add(a.allocate(16 << 10)); // until the heap grew, past the reap lock held elsewhere
                }
            }, failure);
            grower.join(60_000);
            assertThat(grower.isAlive()).as("the growing thread waited for the pass").isFalse();
            assertThat(failure.get()).isNull();
            assertThat(reapLock.hasQueuedThreads()).as("nobody queued on the reap lock").isFalse();
            assertThat(a.reaper.retireEnded()).as("held by the pass: nothing retired, nothing waited for").isZero();
            done.countDown();
            pass.join();
            assertThat(a.reaper.retireEnded()).as("the short thread's and the grower's caches waited for the next pass")
                .isEqualTo(2);
            mine.forEach(TestSupport::invokeCleaner);
        } finally {
            done.countDown();
            a.close();
        }
    }

    /**
     * A thread that first touches a closed allocator (to release a buffer handed out before) gets the
     * shared cache, not a private one nobody would adopt: the block, its slab and its chunk come back.
     */
    @Test
    void aBufferReleasedAfterCloseOnANewThreadComesBackToTheJdk() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0)
            .reapIntervalMillis(60_000).build());
        final AtomicReference<ByteBuffer> handed = new AtomicReference<>();
        final Thread owner = new Thread(() -> handed.set(a.allocate(4096)), "owner");
        owner.start();
        owner.join();
        a.close(); // adopts the owner's cache; the buffer is still live
        final Thread releaser = new Thread(() -> invokeCleaner(handed.get()), "releaser");
        releaser.start();
        releaser.join();
        handed.set(null);
        a.trim();
        final AllocatorStats s = a.stats();
        assertThat(s.liveBuffers()).as("precondition: nothing live").isZero();
        assertThat(s.bytesReserved()).as("closed allocator, no live buffer, every thread that used it ended")
            .isZero();
    }
}
