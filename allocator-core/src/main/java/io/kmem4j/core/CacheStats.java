package io.kmem4j.core;

/**
 * A snapshot of one cache's statistics (one size class), read without stopping the allocator:
 * figures written by other threads may be a moment old and need not add up exactly.
 *
 * @param name                cache name, {@code kmem4j-<objectSize>}
 * @param cacheId             the 16-bit cache id kept in each slab's counters word
 * @param objectSize          bytes per object (the size class)
 * @param objectsPerSlab      objects in one slab
 * @param pagesPerSlab        64 KiB pages in one slab
 * @param slabs               slabs this cache holds (frozen, partial, full and empty)
 * @param partialSlabs        slabs on the partial list
 * @param activeObjects       buffers handed out and not yet released
 * @param totalObjects        {@code slabs * objectsPerSlab}
 * @param allocations         buffers served
 * @param frees               buffers released (explicitly or by GC)
 * @param magazineHits        allocations served by a loaded magazine ({@code allocations - magazineMisses})
 * @param magazineMisses      allocations that took the slow path
 * @param depotExchanges      magazines moved between thread caches and the depot
 * @param depotObjects        objects waiting in the depot's full magazines
 * @param addressOrderScore   share of consecutive allocations (per thread) at ascending addresses, 0..1
 * @param doubleFrees         objects found already free in their slab's bitmap (ignored)
 * @param magazineRounds      objects one magazine of this cache holds (the {@code limit} tunable of
 *                            slabinfo): {@code magazineRounds}, at most 8 above 4 KiB, 1 above 128 KiB
 * @param remoteBatch         frees a thread collects for another owner before handing them over
 *                            in one CAS (the {@code batchcount} tunable of slabinfo)
 */
public record CacheStats(
    String name,
    int cacheId,
    int objectSize,
    int objectsPerSlab,
    int pagesPerSlab,
    long slabs,
    long partialSlabs,
    long activeObjects,
    long totalObjects,
    long allocations,
    long frees,
    long magazineHits,
    long magazineMisses,
    long depotExchanges,
    long depotObjects,
    double addressOrderScore,
    long doubleFrees,
    int magazineRounds,
    int remoteBatch) {

    /**
     * @return the share of allocations served from a thread's magazines without a slow path,
     *         {@code magazineHits / allocations} (0 before any allocation); the one definition of
     *         hit rate used by the beans, slabtop and the summary
     */
    public double magazineHitRate() {
        return allocations == 0 ? 0 : (double) magazineHits / allocations;
    }
}
