package io.kmem4j.agent.jmx;

/**
 * {@code kmem4j:type=Pools} (next to {@code kmem4j:type=Allocator}, with the same
 * {@code instance=N} if that one has it): what the buffer pools kmem4j serves ({@code presets},
 * {@code pools}) and the caller exclusions ({@code excludeCallers}) did. Registered only when one of
 * those keys is set. Counters are totals since start, read live (sums of per-thread adders; a read
 * racing with pool calls may miss the calls in flight). Open types only.
 */
public interface PoolsMXBean {
    /** @return pool allocations served by kmem4j's explicit (no cleaner) flavour. */
    long getPoolAllocations();

    /** @return pool allocations left to the pool's own code (size outside the window, budget, failure). */
    long getPoolAllocationsPassed();

    /** @return kmem4j buffers released through a pool's release method (or freed by a resize). */
    long getPoolReleases();

    /** @return releases of buffers kmem4j does not own, passed to the pool's own release code. */
    long getPoolReleasesPassed();

    /** @return resizes of kmem4j buffers (served by kmem4j, or handed over to the pool's own code). */
    long getPoolResizes();

    /** @return resizes of buffers kmem4j does not own, passed to the pool's own code. */
    long getPoolResizesPassed();

    /** @return pool methods rewritten so far (a class loaded in two loaders counts twice). */
    long getRewrittenMethods();

    /** @return pools (per class loader) that did not fit their classes and were left alone. */
    long getPoolsLeftAlone();

    /** @return classes of excluded callers whose {@code allocateDirect} call sites go to the JDK. */
    long getExcludedClasses();

    /** @return failures inside kmem4j on pool paths and while rewriting classes (each fell back). */
    long getFailures();

    /** @return the pools configured (presets expanded), separated by {@code "; "}. */
    String getPools();
}
