package io.kmem4j.agent.jmx;

/**
 * The allocator as an operator sees it in jconsole: {@code kmem4j:type=Allocator} on the platform
 * MBean server (a second agent instance in the same JVM registers
 * {@code kmem4j:type=Allocator,instance=N}). Every attribute is an open type (a number or a
 * string) and is computed from a snapshot at most 200 ms old. Counters count since start.
 */
public interface AllocatorMXBean {
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

    /** @return {@code allocateDirect} calls passed to the JDK (outside the size window, or failures). */
    long getFallbacks();

    /** @return frees handed to another thread's inbox (deferred cross-thread free). */
    long getRemoteFreesSent();

    /** @return deferred frees taken back by their owner or the reaper. */
    long getRemoteFreesAbsorbed();

    /** @return magazine hits over all allocations, 0..1. */
    double getMagazineHitRate();

    /** @return chunks held now. */
    int getChunks();

    /** @return per-thread caches alive now. */
    int getThreadCaches();

    /** @return allocations that failed inside kmem4j and were served by the JDK instead. */
    long getInterceptorFailures();

    /** @return the effective configuration, {@code key=value} pairs separated by commas. */
    String getConfiguration();

    /**
     * Returns free memory to the JDK (orphaned frees, depots, spare slabs, empty chunks).
     *
     * @return bytes of chunk memory released
     */
    long trim();

    /** @return a {@code /proc/slabinfo}-style table of the caches. */
    String slabinfo();
}
