package io.kmem4j.agent.jmx;

/**
 * The allocator as an operator sees it in jconsole: {@code kmem4j:type=Allocator} on the platform
 * MBean server (should that name be taken, {@code kmem4j:type=Allocator,instance=N}). Every
 * attribute is an open type (a number, a boolean or a string) and, except {@code Enabled},
 * {@code DisabledReason}, {@code InterceptorFailures} and {@code Configuration}, comes from the
 * snapshot shared with the {@code kmem4j:type=SlabCache} beans ({@link StatsSnapshots}, at most
 * 200 ms old). Counters count since start.
 *
 * <p>When the agent is loaded but serves nothing (this JDK's internals do not match, a setting is
 * invalid, or installing failed) the bean is still registered: {@code Enabled} is false, {@code DisabledReason} says why,
 * every counter is 0 and there are no {@code kmem4j:type=SlabCache} beans.
 */
public interface AllocatorMXBean {
    /** @return true when {@code ByteBuffer.allocateDirect} is served by kmem4j; false when interception is off. */
    boolean isEnabled();

    /**
     * @return why interception is off (the JDK and what did not match, or the failure), as the agent's
     *         one WARN or ERROR line says; empty when {@link #isEnabled()}
     */
    String getDisabledReason();

    /** @return buffers served by the slab allocator. */
    long getAllocations();

    /** @return {@code ExplicitFrees + GcFrees}. */
    long getFrees();

    /** @return buffers released on an application thread (invokeCleaner, clean). */
    long getExplicitFrees();

    /** @return buffers released by GC (cleaners on the "Reference Handler" thread). */
    long getGcFrees();

    /** @return slab buffers not yet released ({@code Allocations - Frees}). */
    long getLiveBuffers();

    /** @return sum of the capacities of live slab buffers, bytes. */
    long getBytesInUse();

    /** @return off-heap chunk memory held (counted in the JDK's direct BufferPool), bytes. */
    long getBytesReserved();

    /**
     * @return the largest {@code BytesInUse} seen since start or {@link #resetPeaks()}; sampled at
     *         each snapshot refresh, so a short peak between two refreshes is missed
     */
    long getPeakBytesInUse();

    /** @return the largest {@code LiveBuffers} seen since start or {@link #resetPeaks()}; sampled like {@link #getPeakBytesInUse()} */
    long getPeakLiveBuffers();

    /** @return {@code allocateDirect} calls passed to the JDK (outside the size window, or failures). */
    long getFallbacks();

    /** @return frees handed to another thread's inbox (deferred cross-thread free). */
    long getRemoteFreesSent();

    /** @return deferred frees taken back by their owner or the reaper. */
    long getRemoteFreesAbsorbed();

    /** @return allocations served by a loaded per-thread magazine. */
    long getMagazineHits();

    /** @return allocations that took the slow path (magazine empty). */
    long getMagazineMisses();

    /** @return magazine hits over all allocations since start, 0..1. */
    double getMagazineHitRate();

    /** @return chunks held now. */
    int getChunks();

    /** @return chunks taken from the JDK since start. */
    long getChunksAllocated();

    /** @return chunks given back to the JDK since start. */
    long getChunksReleased();

    /**
     * @return collections ({@code System.gc()}) kmem4j asked for before adding a chunk past its mark
     *         (setting {@code collectAboveBytes}); the collections at
     *         {@code -XX:MaxDirectMemorySize} are the JDK's own and not counted here
     */
    long getCollectionsBeforeGrowing();

    /** @return per-thread caches alive now. */
    int getThreadCaches();

    /** @return releases refused as double or racing frees (ignored, nothing corrupted). */
    long getDoubleFrees();

    /** @return explicit buffers collected without free (explicitLeakDetection=true; their blocks recovered). */
    long getLeaksDetected();

    /** @return allocations that failed inside kmem4j and were served by the JDK instead. */
    long getInterceptorFailures();

    /** @return size classes, i.e. {@code kmem4j:type=SlabCache} beans. */
    int getSlabCaches();

    /**
     * @return the number of the snapshot the other attributes come from (shared with the SlabCache
     *         beans): values read with the same number belong together
     */
    long getSnapshotSequence();

    /** @return the effective configuration, {@code key=value} pairs separated by commas. */
    String getConfiguration();

    /**
     * Returns free memory to the JDK (orphaned frees, depots, empty slabs, empty chunks).
     *
     * @return bytes of chunk memory released
     */
    long trim();

    /**
     * Restarts {@code PeakBytesInUse} and {@code PeakLiveBuffers} from the current values.
     */
    void resetPeaks();

    /**
     * Allocation sites holding the most sampled live bytes, for leak hunting (needs
     * {@code siteSampleRate=N}; one allocation in N records its call site).
     *
     * @param top how many sites
     * @return a table: estimated live bytes, sampled live buffers, sampled allocations, site; or a
     *         line saying that sampling is off
     */
    String outstandingBySite(int top);

    /** @return a {@code /proc/slabinfo}-style table (version 2.1) of the caches, taken now. */
    String slabinfo();
}
