package io.kmem4j.agent.jmx;

/**
 * One size class of the allocator: {@code kmem4j:type=SlabCache,name=kmem4j-<objectSize>} (with
 * {@code ,instance=N} when the Allocator bean got one). Every attribute is an open type (a number or
 * a string) and comes from the snapshot shared with {@code kmem4j:type=Allocator}
 * ({@link StatsSnapshots}); {@code SnapshotSequence} tells which one. The figures are those of a
 * {@code /proc/slabinfo} row plus the cache's counters; they are read without stopping the
 * allocator, so figures written by busy threads may be a moment old.
 */
public interface SlabCacheMXBean {
    /** @return the cache name, {@code kmem4j-<objectSize>}. */
    String getName();

    /** @return the 16-bit cache id kept in each of this cache's slabs. */
    int getCacheId();

    /** @return bytes per object (the size class). */
    int getObjectSize();

    /** @return objects in one slab. */
    int getObjectsPerSlab();

    /** @return 64 KiB pages in one slab. */
    int getPagesPerSlab();

    /** @return slabs held (frozen, partial, full and empty). */
    long getSlabs();

    /** @return slabs on the partial list. */
    long getPartialSlabs();

    /** @return buffers handed out and not yet released. */
    long getActiveObjects();

    /** @return {@code Slabs * ObjectsPerSlab}. */
    long getTotalObjects();

    /** @return {@code ActiveObjects * ObjectSize}: slab memory handed out, bytes. */
    long getActiveBytes();

    /** @return {@code Slabs * PagesPerSlab * 64 KiB}: memory this cache holds, bytes. */
    long getSlabBytes();

    /** @return buffers served since start. */
    long getAllocations();

    /** @return buffers released since start (explicitly or by GC). */
    long getFrees();

    /** @return allocations served by a loaded per-thread magazine. */
    long getMagazineHits();

    /** @return allocations that took the slow path. */
    long getMagazineMisses();

    /** @return {@code MagazineHits / (MagazineHits + MagazineMisses)}, 0 before any allocation. */
    double getMagazineHitRate();

    /** @return magazines moved between thread caches and the depot. */
    long getDepotExchanges();

    /** @return objects waiting in the depot's full magazines. */
    long getDepotObjects();

    /** @return share of consecutive allocations (per thread) at ascending addresses, 0..1. */
    double getAddressOrderScore();

    /** @return objects found already free in their slab (double frees, ignored). */
    long getDoubleFrees();

    /** @return the number of the snapshot the other attributes come from (see the Allocator bean). */
    long getSnapshotSequence();
}
