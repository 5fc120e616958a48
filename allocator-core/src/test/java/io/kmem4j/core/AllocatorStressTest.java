package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Multi-threaded mixed workloads against one allocator, with deterministic seeds
 * ({@link SplittableRandom}; the interleaving of threads is of course not deterministic).
 *
 * <p>Each of T slots runs N operations on a list of live buffers, spread over a chain of short- and
 * long-lived threads (a thread ends mid-run and hands its live buffers to a new one: thread churn,
 * buffers outliving their owner). Operations: allocate (both flavours, sizes around every size-class
 * boundary and random sizes, including ones the JDK serves), release locally, hand to another thread
 * through a shared queue (cross-thread / remote frees), drop a tracked buffer for the GC (with a
 * periodic {@code System.gc()}), racing double releases (the owner and another thread both release
 * the same buffer; exactly one may count) and spot checks of live buffers. Every buffer carries an
 * identity pattern checked before each release; live address ranges are kept in a sorted map and no
 * two may overlap; fresh buffers must be all zeros.
 *
 * <p>At the end everything is released, GC-driven frees are awaited, dead threads' caches adopted and
 * the accounting equations checked; once the reaper has adopted one more thread (and shrunk), no slab
 * may remain and exactly {@code retainedEmptyChunks} empty chunks are kept (0, 2 or 3 by scenario);
 * after {@code trim()} no chunk at all. Scenarios zero memory on release or on allocation.
 *
 * <p>The untagged tests run in the default build in a few seconds; the {@code stress}-tagged ones
 * ({@code -Pstress}) run 2, 4 and 8 threads with 2 M operations each (28 M in all) plus a longer
 * racing-release test.
 */
class AllocatorStressTest {
    private static final int MAX_CLASS = 64 << 10;
    /** Every class size s (64..512 step 64, then 4 per doubling up to 65536) as s-1, s, s+1, plus 0 and 1. */
    private static final int[] BOUNDARY_SIZES = boundarySizes();
    /** Allocated (and released) by the thread that ends last, in {@link #assertBackAtTheRetainedFloor}. */
    private static final int LAST_THREAD_ALLOCATIONS = 1;
    /** A {@code System.gc()} after this many buffers were dropped (over all threads). */
    private static final int GC_EVERY_DROPS = 2_000;

    record Scenario(String name, int threads, int opsPerThread, long seed, SlabAllocatorConfig config) {
    }

    // ------------------------------------------------------------------------------ the tests

    /**
     * Default build: 4 threads x 50 000 operations with small magazines and a small depot (slow paths),
     * memory zeroed on allocation.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void boundedMixedWorkload() throws Exception {
        run(new Scenario("bounded-zeroOnAllocation", 4, 50_000, 0x6B6D_656D_0001L, SlabAllocatorConfig.builder()
            .zeroOnFree(false).magazineRounds(4).depotMagazines(1).retainedEmptyChunks(0).chunkSizeBytes(1 << 20)
            .reapIntervalMillis(20).build()));
    }

    /** Default build: 4 threads x 50 000 operations, default magazines, memory zeroed on release, 2 chunks kept. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void boundedMixedWorkloadZeroOnFree() throws Exception {
        run(new Scenario("bounded-zeroOnFree", 4, 50_000, 0x6B6D_656D_0003L, SlabAllocatorConfig.builder()
            .zeroOnFree(true).retainedEmptyChunks(2).reapIntervalMillis(20).build()));
    }

    /** Default build: two threads release the same buffers at the same moment; exactly one release counts. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void racingDoubleReleasesCountExactlyOnce() throws Exception {
        racingReleases(20_000, 0x6B6D_656D_0002L);
    }

    @Test
    @Tag("stress")
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void stressTwoThreadsTinyMagazines() throws Exception {
        run(new Scenario("stress-2t-tiny-zeroOnAllocation", 2, 2_000_000, 0x6B6D_656D_0102L, SlabAllocatorConfig.builder()
            .zeroOnFree(false).magazineRounds(1).depotMagazines(0).retainedEmptyChunks(0).chunkSizeBytes(1 << 20)
            .reapIntervalMillis(10).build()));
    }

    @Test
    @Tag("stress")
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void stressFourThreadsDefaultMagazinesZeroOnFree() throws Exception {
        run(new Scenario("stress-4t-default-zeroOnFree", 4, 2_000_000, 0x6B6D_656D_0104L, SlabAllocatorConfig.builder()
            .zeroOnFree(true).retainedEmptyChunks(2).reapIntervalMillis(20).build()));
    }

    @Test
    @Tag("stress")
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void stressEightThreadsSmallMagazines() throws Exception {
        run(new Scenario("stress-8t-small-zeroOnAllocation", 8, 2_000_000, 0x6B6D_656D_0108L, SlabAllocatorConfig.builder()
            .zeroOnFree(false).magazineRounds(3).depotMagazines(2).retainedEmptyChunks(3).chunkSizeBytes(2 << 20)
            .reapIntervalMillis(20).build()));
    }

    @Test
    @Tag("stress")
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void stressRacingDoubleReleases() throws Exception {
        racingReleases(1_000_000, 0x6B6D_656D_0110L);
    }

    // ------------------------------------------------------------------------------ the mixed workload

    /** A buffer handed out, with what the test knows about it. */
    private static final class Item {
        final ByteBuffer buf;
        final long id;
        final boolean tracked;
        final boolean owned;
        final long address;
        final int capacity;
        boolean inRanges;

        Item(final ByteBuffer buf, final long id, final boolean tracked, final boolean owned, final long address,
             final int capacity) {
            this.buf = buf;
            this.id = id;
            this.tracked = tracked;
            this.owned = owned;
            this.address = address;
            this.capacity = capacity;
        }

        @Override
        public String toString() {
            return (tracked ? "tracked" : "explicit") + (owned ? "" : "/jdk") + "#" + id + "@0x"
                + Long.toHexString(address) + "+" + capacity;
        }
    }

    /** State shared by every thread of one scenario. */
    private static final class Run {
        final Scenario sc;
        final SlabAllocator allocator;
        final int minCapacity;
        final int maxCapacity;
        final ArrayBlockingQueue<Item> handoff = new ArrayBlockingQueue<>(512);
        final ConcurrentLinkedQueue<Item> racing = new ConcurrentLinkedQueue<>();
        /** Live address ranges: start -> end (exclusive). */
        final ConcurrentSkipListMap<Long, Long> ranges = new ConcurrentSkipListMap<>();
        final AtomicLong nextId = new AtomicLong(1);
        final AtomicLong drops = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        final LongAdder ops = new LongAdder();
        final LongAdder corruptions = new LongAdder();
        final LongAdder overlaps = new LongAdder();
        final LongAdder notZeroed = new LongAdder();
        final LongAdder wrongShape = new LongAdder();
        final LongAdder ownedAllocations = new LongAdder();
        final LongAdder jdkAllocations = new LongAdder();
        final LongAdder droppedOwned = new LongAdder();
        final LongAdder droppedTotal = new LongAdder();
        final LongAdder races = new LongAdder();
        final LongAdder expectedDoubleFrees = new LongAdder();
        final LongAdder handedOff = new LongAdder();
        final LongAdder adopted = new LongAdder();
        final LongAdder lifetimes = new LongAdder();
        final LongAdder gcCalls = new LongAdder();

        Run(final Scenario sc) {
            this.sc = sc;
            this.allocator = new SlabAllocator(sc.config());
            this.minCapacity = sc.config().minCapacityBytes();
            this.maxCapacity = allocator.maxCapacity();
        }

        void problem(final LongAdder counter, final String what) {
            counter.increment();
            if (problems.size() < 20) {
                problems.add(Thread.currentThread().getName() + ": " + what);
            }
        }

        // ---- allocation and checks

        Item allocate(final SplittableRandom r) {
            final int size = size(r);
            final boolean tracked = r.nextBoolean();
            final ByteBuffer b = tracked ? allocator.allocate(size) : allocator.allocateExplicit(size);
            final boolean owned = allocator.owns(b);
            if (owned != (size >= minCapacity && size <= maxCapacity) || b.capacity() != size || b.position() != 0
                || b.limit() != size || !b.isDirect()) {
                problem(wrongShape, "wrong shape for size " + size + ": " + b + " owned=" + owned);
            }
            final int nonZero = firstNonZero(b);
            if (nonZero >= 0) {
                problem(notZeroed, "fresh buffer of " + size + " bytes @0x" + Long.toHexString(TestSupport.address(b))
                    + " not zero at " + nonZero);
            }
            final long id = nextId.getAndIncrement();
            TestSupport.writePattern(b, id);
            final Item it = new Item(b, id, tracked, owned, TestSupport.address(b), size);
            register(it);
            (owned ? ownedAllocations : jdkAllocations).increment();
            return it;
        }

        void verify(final Item it, final String when) {
            final int bad = TestSupport.checkPattern(it.buf, it.id);
            if (bad >= 0) {
                problem(corruptions, "pattern of " + it + " broken at " + bad + " (" + when + ")");
            } else if (it.buf.capacity() != it.capacity || TestSupport.address(it.buf) != it.address) {
                problem(corruptions, "buffer " + it + " changed shape (" + when + "): " + it.buf);
            }
        }

        /** Adds the item's range; another live range overlapping it is counted. */
        void register(final Item it) {
            if (it.capacity == 0) {
                return;
            }
            final long end = it.address + it.capacity;
            final Long prev = ranges.putIfAbsent(it.address, end);
            if (prev != null) {
                problem(overlaps, it + " starts where a live buffer starts (ending at 0x" + Long.toHexString(prev) + ")");
                return;
            }
            it.inRanges = true;
            final Map.Entry<Long, Long> lower = ranges.lowerEntry(it.address);
            if (lower != null && lower.getValue() > it.address) {
                problem(overlaps, it + " overlaps live [0x" + Long.toHexString(lower.getKey()) + ", 0x"
                    + Long.toHexString(lower.getValue()) + ")");
            }
            final Map.Entry<Long, Long> higher = ranges.higherEntry(it.address);
            if (higher != null && higher.getKey() < end) {
                problem(overlaps, it + " overlaps live [0x" + Long.toHexString(higher.getKey()) + ", 0x"
                    + Long.toHexString(higher.getValue()) + ")");
            }
        }

        /** Removes the range before the memory can go back to the allocator. */
        void unregister(final Item it) {
            if (it.inRanges) {
                it.inRanges = false;
                ranges.remove(it.address, it.address + it.capacity);
            }
        }

        // ---- releases

        /** Verifies, forgets the range, releases the way the flavour's users do. */
        void release(final Item it, final SplittableRandom r) {
            verify(it, "release");
            unregister(it);
            releaseRaw(it, r);
        }

        void releaseRaw(final Item it, final SplittableRandom r) {
            if (it.tracked && r.nextInt(4) != 0) {
                TestSupport.invokeCleaner(it.buf);
            } else {
                allocator.free(it.buf); // tracked: runs the cleaner; explicit: CAS-clears the address
            }
            // Reachable until its release is done: once the cleaner is fetched, nothing else holds the buffer,
            // and a collection could find it and have the JDK's cleaner thread run that same cleaner first
            // (still exactly once, but counted as a GC free: 1-2 per run more GC frees than buffers dropped)
            java.lang.ref.Reference.reachabilityFence(it.buf);
        }

        static Item takeAny(final List<Item> live, final SplittableRandom r) {
            final int i = r.nextInt(live.size());
            final Item it = live.get(i);
            final Item last = live.remove(live.size() - 1);
            if (i < live.size()) {
                live.set(i, last);
            }
            return it;
        }

        void releaseLocal(final List<Item> live, final SplittableRandom r) {
            release(takeAny(live, r), r);
        }

        /** The buffer goes to whichever thread polls the queue next (it stays live meanwhile). */
        void handOff(final List<Item> live, final SplittableRandom r) {
            final Item it = takeAny(live, r);
            if (handoff.offer(it)) {
                handedOff.increment();
            } else {
                release(it, r);
            }
        }

        /** Takes a buffer from another thread: releases it here (a remote free) or keeps it. */
        void takeHandedOff(final List<Item> live, final SplittableRandom r, final int maxLive) {
            final Item it = handoff.poll();
            if (it == null) {
                return;
            }
            if (r.nextBoolean() || live.size() >= maxLive) {
                release(it, r);
            } else {
                verify(it, "adopt");
                live.add(it);
                adopted.increment();
            }
        }

        /** Drops a tracked buffer: the GC's cleaner releases it later ("Reference Handler" thread). */
        void dropForGc(final List<Item> live, final SplittableRandom r) {
            final Item it = takeAny(live, r);
            if (!it.tracked) {
                release(it, r); // an explicit buffer is never freed by GC
                return;
            }
            verify(it, "drop");
            unregister(it);
            if (it.owned) {
                droppedOwned.increment();
            }
            droppedTotal.increment();
            if (drops.incrementAndGet() % GC_EVERY_DROPS == 0) {
                gcCalls.increment();
                System.gc();
            }
        }

        /** Releases a buffer and lets another thread release it too; exactly one release may count. */
        void raceRelease(final List<Item> live, final SplittableRandom r) {
            final Item it = takeAny(live, r);
            verify(it, "race");
            unregister(it);
            races.increment();
            if (!it.tracked && it.owned) {
                expectedDoubleFrees.increment(); // the second free() of an explicit slab buffer is counted
            }
            racing.add(it);
            releaseRaw(it, r);
        }

        void finishRace(final SplittableRandom r) {
            final Item it = racing.poll();
            if (it != null) {
                releaseRaw(it, r);
            }
        }

        void spotCheck(final List<Item> live, final SplittableRandom r) {
            verify(live.get(r.nextInt(live.size())), "spot check");
        }

        // ---- one thread's share of a slot

        void lifetime(final List<Item> live, final SplittableRandom r, final int n, final int maxLive,
                      final boolean last) {
            for (int i = 0; i < n; i++) {
                final int op = r.nextInt(100);
                if (op < 40 || live.isEmpty()) {
                    if (live.size() >= maxLive) {
                        releaseLocal(live, r);
                    } else {
                        live.add(allocate(r));
                    }
                } else if (op < 58) {
                    releaseLocal(live, r);
                } else if (op < 66) {
                    handOff(live, r);
                } else if (op < 76) {
                    takeHandedOff(live, r, maxLive);
                } else if (op < 81) {
                    dropForGc(live, r);
                } else if (op < 84) {
                    raceRelease(live, r);
                } else if (op < 90) {
                    finishRace(r);
                } else {
                    spotCheck(live, r);
                }
            }
            ops.add(n);
            if (last) {
                while (!live.isEmpty()) {
                    releaseLocal(live, r);
                }
            }
        }

        int size(final SplittableRandom r) {
            if (r.nextBoolean()) {
                return BOUNDARY_SIZES[r.nextInt(BOUNDARY_SIZES.length)];
            }
            final int hi = 1 << (1 + r.nextInt(16)); // log-uniform up to 64 KiB, a few beyond (JDK)
            return 1 + r.nextInt(hi + hi / 8);
        }
    }

    private static Thread thread(final String name, final Run run, final Runnable body) {
        final Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (final Throwable e) {
                run.failure.compareAndSet(null, e);
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * The slot's driver: starts one worker thread after another (each does a share of the slot's
     * operations, then ends), passing the live list on. The driver itself never touches the allocator.
     */
    private static Thread slot(final Run run, final int slot, final SplittableRandom slotRandom) {
        return thread("slot-" + slot, run, () -> {
            final List<Item> live = new ArrayList<>();
            final int total = run.sc.opsPerThread();
            int remaining = total;
            int n = 0;
            while (remaining > 0) {
                final SplittableRandom r = slotRandom.split();
                int len = r.nextInt(10) < 3 ? 50 + r.nextInt(2_000) : total / 10 + r.nextInt(total / 4 + 1);
                len = Math.min(len, remaining);
                remaining -= len;
                final boolean last = remaining == 0;
                final int maxLive = 16 + r.nextInt(500);
                final int ops = len;
                final Thread w = thread("stress-" + slot + "-" + n++, run,
                    () -> run.lifetime(live, r, ops, maxLive, last));
                run.lifetimes.increment();
                w.start();
                try {
                    w.join();
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                if (run.failure.get() != null) {
                    return;
                }
            }
        });
    }

    private static void run(final Scenario sc) throws Exception {
        final Run run = new Run(sc);
        final long start = System.nanoTime();
        try {
            final SplittableRandom master = new SplittableRandom(sc.seed());
            final List<Thread> slots = new ArrayList<>();
            for (int s = 0; s < sc.threads(); s++) {
                slots.add(slot(run, s, master.split()));
            }
            slots.forEach(Thread::start);
            for (final Thread t : slots) {
                t.join();
            }
            // whatever is still queued is released on a thread of its own, which then ends too
            final SplittableRandom drainRandom = master.split();
            final Thread drainer = thread("stress-drain", run, () -> {
                Item it;
                while ((it = run.handoff.poll()) != null) {
                    run.release(it, drainRandom);
                }
                while ((it = run.racing.poll()) != null) {
                    run.releaseRaw(it, drainRandom);
                }
            });
            drainer.start();
            drainer.join();
            final long workDone = System.nanoTime();
            if (run.failure.get() != null) {
                throw new AssertionError("a worker failed; problems: " + run.problems, run.failure.get());
            }
            assertThat(run.ranges).as("every live range was removed").isEmpty();

            // GC-driven frees of the dropped tracked buffers
            final SlabAllocator a = run.allocator;
            final long dropped = run.droppedOwned.sum();
            Awaitility.await("GC-driven frees of " + dropped + " dropped buffers").atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    System.gc();
                    return a.stats().gcFrees() >= dropped;
                });
            final AllocatorStats beforeTrim = a.stats();
            assertThat(beforeTrim.gcFrees()).as("GC frees").isEqualTo(dropped);

            adoptDeadThreadsAndCheckInvariants(a);
            final AllocatorStats floor = assertBackAtTheRetainedFloor(a);
            a.trim();
            final AllocatorStats s = a.stats();
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.printf("AllocatorStressTest[%s] threads=%d operations=%d corruptions=%d overlaps=%d"
                    + " notZeroed=%d elapsed=%d ms (work %d ms) | lifetimes=%d allocations=%d jdkAllocations=%d"
                    + " explicitFrees=%d gcFrees=%d remoteFreesSent=%d races=%d doubleFrees=%d handedOff=%d"
                    + " adopted=%d gcCalls=%d threadCachesRetired=%d chunksAllocated=%d"
                    + " | without trim: slabs=0 chunks=%d (retainedEmptyChunks=%d) bytesReserved=%d%n",
                sc.name(), sc.threads(), run.ops.sum(), run.corruptions.sum(), run.overlaps.sum(), run.notZeroed.sum(),
                elapsedMs, TimeUnit.NANOSECONDS.toMillis(workDone - start), run.lifetimes.sum(),
                s.allocations(), run.jdkAllocations.sum(), s.explicitFrees(), s.gcFrees(), s.remoteFreesSent(),
                run.races.sum(), s.doubleFrees(), run.handedOff.sum(), run.adopted.sum(), run.gcCalls.sum(),
                s.threadCachesRetired(), s.chunksAllocated(), floor.chunks(), sc.config().retainedEmptyChunks(),
                floor.bytesReserved());

            assertThat(run.problems).as("problems seen by the workers").isEmpty();
            assertThat(run.corruptions.sum()).as("corrupted patterns").isZero();
            assertThat(run.overlaps.sum()).as("overlapping live buffers").isZero();
            assertThat(run.notZeroed.sum()).as("fresh buffers not zero").isZero();
            assertThat(run.wrongShape.sum()).as("buffers of the wrong shape").isZero();
            assertThat(run.ops.sum()).isEqualTo((long) sc.threads() * sc.opsPerThread());
            assertThat(run.droppedTotal.sum()).as("some buffers were left to the GC").isPositive();
            assertThat(s.remoteFreesSent()).as("cross-thread frees happened").isPositive();
            assertThat(s.allocations()).as("slab allocations (and the floor check's last one)")
                .isEqualTo(run.ownedAllocations.sum() + LAST_THREAD_ALLOCATIONS);
            assertThat(s.fallbacks()).as("JDK allocations: only sizes outside the window")
                .isEqualTo(run.jdkAllocations.sum());
            assertThat(s.frees()).as("every slab buffer released exactly once").isEqualTo(s.allocations());
            assertThat(s.liveBuffers()).isZero();
            assertThat(s.bytesInUse()).isZero();
            assertThat(s.hookFailures()).isZero();
            assertThat(s.doubleFrees()).as("racing second free() of explicit slab buffers, each counted once")
                .isEqualTo(run.expectedDoubleFrees.sum());
            assertThat(s.threadCaches()).as("caches of dead threads adopted").isZero();
            for (final CacheStats c : s.caches()) {
                assertThat(c.doubleFrees()).as("objects found already free in %s", c.name()).isZero();
                assertThat(c.activeObjects()).as("active objects of %s", c.name()).isZero();
                assertThat(c.slabs()).as("slabs of %s after trim", c.name()).isZero();
            }
            assertThat(s.chunks()).as("every chunk back to the JDK (retainedEmptyChunks=0)").isZero();
            assertThat(s.bytesReserved()).isZero();
        } finally {
            run.allocator.close();
        }
    }

    /**
     * Every thread that used the allocator has ended: adopt their caches ({@code reap()}), wait for a
     * concurrent adoption by the reaper thread to finish, then check the accounting equations. The
     * reaper may still be returning a chain of orphans it took a moment ago, so a failed check is
     * retried briefly before it counts.
     */
    static void adoptDeadThreadsAndCheckInvariants(final SlabAllocator a) throws InterruptedException {
        a.reap();
        Awaitility.await("dead threads' caches adopted").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(10)).until(() -> a.stats().threadCaches() == 0);
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            a.reap();
            try {
                a.checkInvariants();
                return;
            } catch (final IllegalStateException e) {
                last = e;
                Thread.sleep(20);
            }
        }
        throw last;
    }

    /**
     * Every buffer released, every thread that used the allocator ended and adopted: once the reaper has
     * adopted a thread it shrinks (flushes depots, frees empty slabs, releases empty chunks beyond
     * {@code retainedEmptyChunks}), so one more thread that allocates and ends must leave, without
     * {@code trim()}, no slab at all and exactly the retained floor of empty chunks (fewer only if fewer
     * were ever allocated). ({@code trim()} itself releases the retained chunks too.)
     *
     * @return the statistics at the floor
     */
    static AllocatorStats assertBackAtTheRetainedFloor(final SlabAllocator a) throws InterruptedException {
        // LAST_THREAD_ALLOCATIONS: one buffer, released at once
        final Thread last = new Thread(() -> TestSupport.invokeCleaner(a.allocate(64)), "stress-last");
        last.start();
        last.join();
        a.reap();
        final AllocatorStats s = a.stats();
        assertThat(s.threadCaches()).as("the last thread adopted").isZero();
        assertThat(s.liveBuffers()).isZero();
        for (final CacheStats c : s.caches()) {
            assertThat(c.slabs()).as("slabs of %s, all empty and freed by the reaper's shrink", c.name()).isZero();
        }
        final long floor = Math.min(a.config().retainedEmptyChunks(), s.chunksAllocated());
        assertThat(s.chunks()).as("chunks kept without trim (retainedEmptyChunks=%d)", a.config().retainedEmptyChunks())
            .isEqualTo(floor);
        assertThat(s.bytesReserved()).as("bytes reserved at the floor")
            .isEqualTo(floor * (a.config().chunkSizeBytes() + 4096L));
        return s;
    }

    // ------------------------------------------------------------------------------ racing releases

    /**
     * Two threads release the same buffers at the same moment (a barrier per batch, both walk the
     * batch in the same order): for explicit slab buffers exactly one {@code free()} wins and the other
     * is counted in {@code doubleFrees()}; for tracked buffers the JDK cleaner runs exactly once and
     * nothing is counted as a double free.
     */
    private static void racingReleases(final int n, final long seed) throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().magazineRounds(2).depotMagazines(1)
            .retainedEmptyChunks(0).chunkSizeBytes(1 << 20).reapIntervalMillis(20).build());
        final long start = System.nanoTime();
        try {
            final int batch = 128;
            final Item[] items = new Item[batch];
            final CyclicBarrier barrier = new CyclicBarrier(2);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final LongAdder corruptions = new LongAdder();
            final LongAdder owned = new LongAdder();
            final LongAdder explicitOwned = new LongAdder();
            final LongAdder jdk = new LongAdder();
            final int rounds = (n + batch - 1) / batch;
            final SplittableRandom master = new SplittableRandom(seed);
            final SplittableRandom ra = master.split();
            final SplittableRandom rb = master.split();
            final Runnable owner = () -> {
                try {
                    for (int round = 0; round < rounds; round++) {
                        for (int i = 0; i < batch; i++) {
                            final int size = ra.nextBoolean() ? BOUNDARY_SIZES[ra.nextInt(BOUNDARY_SIZES.length)]
                                : 1 + ra.nextInt(MAX_CLASS);
                            final boolean tracked = ra.nextBoolean();
                            final ByteBuffer b = tracked ? a.allocate(size) : a.allocateExplicit(size);
                            final long id = (long) round * batch + i + 1;
                            TestSupport.writePattern(b, id);
                            final boolean mine = a.owns(b);
                            items[i] = new Item(b, id, tracked, mine, TestSupport.address(b), size);
                            (mine ? owned : jdk).increment();
                            if (mine && !tracked) {
                                explicitOwned.increment();
                            }
                        }
                        for (int i = 0; i < batch; i++) {
                            if (TestSupport.checkPattern(items[i].buf, items[i].id) >= 0) {
                                corruptions.increment();
                            }
                        }
                        barrier.await(30, TimeUnit.SECONDS); // batch ready
                        for (int i = 0; i < batch; i++) {
                            releaseOnce(a, items[i], ra);
                        }
                        barrier.await(30, TimeUnit.SECONDS); // both done
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                    barrier.reset();
                }
            };
            final Runnable other = () -> {
                try {
                    for (int round = 0; round < rounds; round++) {
                        barrier.await(30, TimeUnit.SECONDS);
                        for (int i = 0; i < batch; i++) {
                            releaseOnce(a, items[i], rb);
                        }
                        barrier.await(30, TimeUnit.SECONDS);
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                    barrier.reset();
                }
            };
            final Thread t1 = new Thread(owner, "race-owner");
            final Thread t2 = new Thread(other, "race-other");
            t1.start();
            t2.start();
            t1.join();
            t2.join();
            if (failure.get() != null) {
                throw new AssertionError("a racing thread failed", failure.get());
            }
            adoptDeadThreadsAndCheckInvariants(a);
            assertBackAtTheRetainedFloor(a);
            a.trim();
            final AllocatorStats s = a.stats();
            System.out.printf("AllocatorStressTest[racing-releases] threads=2 operations=%d corruptions=%d"
                    + " elapsed=%d ms | allocations=%d jdkAllocations=%d explicitFrees=%d doubleFrees=%d"
                    + " remoteFreesSent=%d%n",
                (long) rounds * batch * 3, corruptions.sum(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                s.allocations(), jdk.sum(), s.explicitFrees(), s.doubleFrees(), s.remoteFreesSent());
            assertThat(corruptions.sum()).isZero();
            assertThat(s.allocations()).isEqualTo(owned.sum() + LAST_THREAD_ALLOCATIONS);
            assertThat(s.explicitFrees()).as("each buffer released exactly once")
                .isEqualTo(owned.sum() + LAST_THREAD_ALLOCATIONS);
            assertThat(s.gcFrees()).isZero();
            assertThat(s.doubleFrees()).as("one double free per explicit slab buffer, none for tracked ones")
                .isEqualTo(explicitOwned.sum());
            assertThat(s.hookFailures()).isZero();
            assertThat(s.liveBuffers()).isZero();
            assertThat(s.bytesInUse()).isZero();
            for (final CacheStats c : s.caches()) {
                assertThat(c.doubleFrees()).as("objects found already free in %s", c.name()).isZero();
                assertThat(c.slabs()).as("slabs of %s", c.name()).isZero();
            }
            assertThat(s.chunks()).isZero();
        } finally {
            a.close();
        }
    }

    private static void releaseOnce(final SlabAllocator a, final Item it, final SplittableRandom r) {
        if (it.tracked && r.nextBoolean()) {
            TestSupport.invokeCleaner(it.buf);
        } else {
            a.free(it.buf);
        }
    }

    // ------------------------------------------------------------------------------ helpers

    private static int[] boundarySizes() {
        final SizeClasses classes = new SizeClasses(MAX_CLASS);
        final List<Integer> sizes = new ArrayList<>(List.of(0, 1));
        for (int c = 0; c < classes.count(); c++) {
            final int s = classes.size(c);
            sizes.add(s - 1);
            sizes.add(s);
            sizes.add(s + 1); // for the largest class: served by the JDK
        }
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    /** @return the index of the first non-zero byte, or -1 (reads longs where it can). */
    static int firstNonZero(final ByteBuffer b) {
        final int cap = b.capacity();
        int i = 0;
        for (; i + 8 <= cap; i += 8) {
            if (b.getLong(i) != 0) {
                break;
            }
        }
        for (; i < cap; i++) {
            if (b.get(i) != 0) {
                return i;
            }
        }
        return -1;
    }
}
