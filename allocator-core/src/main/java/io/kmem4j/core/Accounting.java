package io.kmem4j.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * The allocator's figures: the few counters written off the hit paths (fallbacks, failures, double
 * frees, trims), the statistics snapshot summed from every thread cache on read
 * ({@link #stats()}), and the invariant check of debug mode and tests ({@link #checkInvariants()}).
 *
 * <p>Derived rather than counted: magazine hits ({@code allocations - misses}; misses are counted on
 * the slow path only), GC frees (the frees counted by the GC cleaner thread's own cache) and
 * explicit frees ({@code frees - gcFrees}).
 *
 * <p>Threads: any. The counters are {@link LongAdder}s (contended only on failure paths); a
 * snapshot reads other threads' plain counters racily and may be a moment old.
 */
final class Accounting {
    final LongAdder fallbacks = new LongAdder();
    final LongAdder doubleFrees = new LongAdder();
    final LongAdder hookFailures = new LongAdder();
    final LongAdder allocationFailures = new LongAdder();
    final LongAdder trims = new LongAdder();

    private final SlabCache[] caches;
    private final PageHeap pages;
    private final ThreadRegistry registry;
    private final RemoteFrees remote;
    private final LeakDetector leakDetector;
    private final CollectBeforeGrowing collector;

    Accounting(final SlabCache[] caches, final PageHeap pages, final ThreadRegistry registry, final RemoteFrees remote,
               final LeakDetector leakDetector, final CollectBeforeGrowing collector) {
        this.collector = collector;
        this.caches = caches;
        this.pages = pages;
        this.registry = registry;
        this.remote = remote;
        this.leakDetector = leakDetector;
    }

    /** A request the JDK serves: counted, a JFR event when enabled; returns {@code null} ("let the JDK allocate"). */
    ByteBuffer fallback(final int capacity, final String reason) {
        fallbacks.increment();
        if (Events.recorder()) {
            final Events.Fallback e = new Events.Fallback();
            if (e.shouldCommit()) {
                e.capacity = capacity;
                e.reason = reason;
                e.commit();
            }
        }
        return null;
    }

    /** A request that failed after its block was taken (and given back): counted; the JDK serves it. */
    ByteBuffer failed(final int capacity) {
        allocationFailures.increment();
        return fallback(capacity, "buffer construction failed");
    }

    /** @return a snapshot of the statistics, summed over all thread caches. */
    AllocatorStats stats() {
        final ThreadRegistry.Totals t = registry.totals();
        final long[] sum = t.stats();
        final List<CacheStats> cs = new ArrayList<>(caches.length);
        long allocs = 0;
        long frees = 0;
        long misses = 0;
        long slabDoubleFrees = 0;
        for (final SlabCache c : caches) {
            final int b = ThreadCache.classBase(c.classIndex);
            final long a = sum[b + ThreadCache.ALLOCS];
            final long f = sum[b + ThreadCache.FREES];
            final long m = sum[b + ThreadCache.MISSES];
            allocs += a;
            frees += f;
            misses += m;
            final long slabs;
            final long partial;
            final long depot;
            final long exchanges;
            final long cacheDoubleFrees;
            c.lock.lock();
            try {
                slabs = c.slabs;
                partial = c.partialSlabsLocked();
                depot = c.depot.objects();
                exchanges = c.depot.exchanges;
                cacheDoubleFrees = c.doubleFrees;
            } finally {
                c.lock.unlock();
            }
            slabDoubleFrees += cacheDoubleFrees;
            cs.add(new CacheStats(c.name, c.id, c.objectSize, c.objectsPerSlab, c.slabPages, slabs, partial,
                a - f, slabs * c.objectsPerSlab, a, f, a - m, m, exchanges, depot,
                a == 0 ? 0 : (double) sum[b + ThreadCache.ASCENDING] / a, cacheDoubleFrees, c.magazineRounds,
                RemoteBatches.BATCH));
        }
        final long gcFrees = t.gcFrees();
        return new AllocatorStats(allocs, frees - gcFrees, gcFrees,
            t.bytesInUse(), pages.reservedBytes(), fallbacks.sum(),
            sum[ThreadCache.REMOTE_SENT], sum[ThreadCache.REMOTE_ABSORBED], sum[ThreadCache.REMOTE_BATCHES],
            allocs - misses, misses, pages.chunkCount(), pages.chunksAllocated(), pages.chunksReleased(), trims.sum(),
            collector.collections(),
            t.liveCaches(), t.retiredCaches(), CacheTable.used(), hookFailures.sum(), allocationFailures.sum(),
            leakDetector == null ? 0 : leakDetector.leaks(), doubleFrees.sum() + slabDoubleFrees, List.copyOf(cs));
    }

    /**
     * Verifies the accounting equations (the debug-mode check; mimalloc style):
     * <pre>
     *   per slab:  objects == inuse + free_in_bitmap
     *   per cache: sum(inuse) == live buffers + rounds in thread caches' magazines + depot + shared magazine
     *                            + frees in outgoing batches + in inboxes + in the orphans
     * </pre>
     * Only meaningful when no other thread is using the allocator (tests call it after joining their
     * threads); frees the JDK's cleaner thread makes meanwhile are waited out (the figures are taken
     * again until they held still).
     *
     * @throws IllegalStateException naming the slab or cache and the figures that disagree
     */
    void checkInvariants() {
        // A GC-driven free may be in flight on the JDK's cleaner thread (counted but not yet in an
        // inbox, or the reverse) while the figures are read; a real break persists, a race does not.
        // So: check until the figures held still and agree, a hundred times at most, a millisecond apart.
        IllegalStateException broken = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            final AllocatorStats before = stats();
            try {
                broken = checkOnce(before);
            } catch (final RuntimeException duringAFree) {
                // the GC cleaner thread's batches, walked while it adds to them: a torn chain (a race retries)
                broken = new IllegalStateException("the figures could not be read: " + duringAFree, duringAFree);
            }
            final AllocatorStats after = stats();
            if (broken == null && after.frees() == before.frees() && after.allocations() == before.allocations()) {
                return;
            }
            try {
                Thread.sleep(1);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (broken != null) {
            throw broken;
        }
    }

    /** @return the first broken equation for the figures {@code s}, or {@code null}. */
    private IllegalStateException checkOnce(final AllocatorStats s) {
        final long[] held = new long[caches.length];
        final Chunk[] hint = new Chunk[1];
        final LongConsumer countPending = a -> held[pages.slabOf(a, hint).cache.classIndex]++;
        registry.forEach(tc -> {
            if (tc.kind == ThreadCache.CACHING) {
                for (int c = 0; c < caches.length; c++) {
                    held[c] += tc.loaded[c].count + tc.previous[c].count;
                }
            }
            tc.forEachPending(countPending);
            tc.inbox.forEach(countPending);
        });
        remote.orphans.forEach(countPending);
        final long[] inuse = new long[caches.length];
        for (final Chunk chunk : pages.map.chunks()) {
            for (int p = 0; p < chunk.pages; p++) {
                final Slab slab = chunk.slabs[p];
                if (slab == null || slab.headPage != p) {
                    continue;
                }
                slab.check();
                inuse[slab.cache.classIndex] += slab.inuse();
            }
        }
        for (final SlabCache c : caches) {
            c.lock.lock();
            try {
                held[c.classIndex] += c.heldObjectsLocked();
            } finally {
                c.lock.unlock();
            }
            final long live = s.caches().get(c.classIndex).activeObjects();
            if (inuse[c.classIndex] != live + held[c.classIndex]) {
                return new IllegalStateException("cache invariant broken: " + c.name + " inuse=" + inuse[c.classIndex]
                    + " live=" + live + " held=" + held[c.classIndex]);
            }
        }
        return null;
    }
}
