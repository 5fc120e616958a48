package io.kmem4j.core;

import java.util.List;

/**
 * A snapshot of a {@link SlabAllocator}'s statistics, summed from per-thread counters on read
 * (no shared atomic on the hit paths, as the per-CPU counters of the Linux 6.18 UDP receive series). Figures written by
 * running threads may be a moment old.
 *
 * @param allocations         buffers served by the slab allocator
 * @param explicitFrees       buffers released on an application thread (invokeCleaner, clean, free)
 * @param gcFrees             buffers released by GC (cleaners run on the JDK's cleaner thread: "Reference
 *                            Handler" on JDK 17-25, {@code java.nio.BufferCleaner}'s on 26+, or, on 26+,
 *                            by a platform thread kmem4j has help the JDK run them before growing or at
 *                            the limit; those the JDK's own reservation runs on an allocating thread
 *                            after a request passed to the JDK at the limit, and those a virtual thread
 *                            helps run, count as explicit)
 * @param bytesInUse          sum of the capacities of live slab buffers, bytes
 * @param bytesReserved       off-heap chunk memory held (counted against MaxDirectMemorySize), bytes
 * @param fallbacks           requests passed to the JDK (size outside the window, re-entrant calls,
 *                            exhausted budget, closed allocator)
 * @param remoteFreesSent     frees handed to another thread (deferred cross-thread free)
 * @param remoteFreesAbsorbed deferred frees taken back in by their owner, the reaper, or a thread at the direct-memory limit
 * @param remoteBatches       batches handed over (one CAS each)
 * @param magazineHits        allocations served by a loaded magazine ({@code allocations - magazineMisses})
 * @param magazineMisses      allocations that took the slow path
 * @param chunks              chunks held now
 * @param chunksAllocated     chunks taken from the JDK since start
 * @param chunksReleased      chunks returned to the JDK since start
 * @param trims               calls to {@link SlabAllocator#trim()}
 * @param collectionsBeforeGrowing collections ({@code System.gc()}) asked for before adding a chunk past the
 *                            mark ({@link SlabAllocatorConfig#collectAboveBytes()}); the collections at the
 *                            direct-memory limit are the JDK's own and not counted here
 * @param threadCaches        live per-thread caches
 * @param threadCachesRetired per-thread caches of dead threads adopted by the reaper
 * @param cacheIdsInUse       cache ids in use in this JVM (of 65535)
 * @param hookFailures        release hooks that failed inside kmem4j (the block was kept, nothing thrown)
 * @param allocationFailures  allocations that failed inside kmem4j (e.g. heap exhausted) and went to the JDK
 * @param leaksDetected       explicit buffers collected without {@code free} (with explicitLeakDetection; recovered)
 * @param doubleFrees         second or racing releases of an explicit buffer, and objects found already
 *                            free in their slab (all ignored)
 * @param caches              per size class
 */
public record AllocatorStats(
    long allocations,
    long explicitFrees,
    long gcFrees,
    long bytesInUse,
    long bytesReserved,
    long fallbacks,
    long remoteFreesSent,
    long remoteFreesAbsorbed,
    long remoteBatches,
    long magazineHits,
    long magazineMisses,
    int chunks,
    long chunksAllocated,
    long chunksReleased,
    long trims,
    long collectionsBeforeGrowing,
    int threadCaches,
    long threadCachesRetired,
    int cacheIdsInUse,
    long hookFailures,
    long allocationFailures,
    long leaksDetected,
    long doubleFrees,
    List<CacheStats> caches) {

    /** The statistics of an allocator that has served nothing yet (the agent's, before the first direct allocation). */
    public static final AllocatorStats EMPTY = new AllocatorStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, List.of());

    /** @return {@code explicitFrees + gcFrees}. */
    public long frees() {
        return explicitFrees + gcFrees;
    }

    /** @return {@code allocations - frees()}: slab buffers not yet released. */
    public long liveBuffers() {
        return allocations - frees();
    }

    /**
     * @return the share of allocations served from a thread's magazines without a slow path,
     *         {@code magazineHits / allocations} (0 before any allocation); the same definition as
     *         {@link CacheStats#magazineHitRate()}
     */
    public double magazineHitRate() {
        return allocations == 0 ? 0 : (double) magazineHits / allocations;
    }
}
