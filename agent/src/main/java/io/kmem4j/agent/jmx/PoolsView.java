package io.kmem4j.agent.jmx;

import java.util.List;
import java.util.stream.Collectors;

import io.kmem4j.agent.pool.PoolRouter;
import io.kmem4j.agent.pool.PoolSpec;
import io.kmem4j.agent.pool.PoolTransformer;

/** The {@code kmem4j:type=Pools} bean over a {@link PoolRouter} and a {@link PoolTransformer}. */
public final class PoolsView implements PoolsMXBean {
    private final PoolRouter router;
    private final PoolTransformer transformer;
    private final String pools;

    public PoolsView(final PoolRouter router, final PoolTransformer transformer, final List<PoolSpec> pools) {
        this.router = router;
        this.transformer = transformer;
        this.pools = pools.stream().map(p -> p.name + "=" + p.members).collect(Collectors.joining("; "));
    }

    /** The router behind the bean (the agent's shutdown hook stops its allocations). */
    public PoolRouter router() {
        return router;
    }

    @Override
    public long getPoolAllocations() {
        return router.allocations.sum();
    }

    @Override
    public long getPoolAllocationsPassed() {
        return router.allocationsPassed.sum();
    }

    @Override
    public long getPoolReleases() {
        return router.releases.sum();
    }

    @Override
    public long getPoolReleasesPassed() {
        return router.releasesPassed.sum();
    }

    @Override
    public long getPoolResizes() {
        return router.resizes.sum();
    }

    @Override
    public long getPoolResizesPassed() {
        return router.resizesPassed.sum();
    }

    @Override
    public long getRewrittenMethods() {
        return transformer.rewrittenMethods.sum();
    }

    @Override
    public long getPoolsLeftAlone() {
        return transformer.poolsLeftAlone.sum();
    }

    @Override
    public long getExcludedClasses() {
        return transformer.excludedClasses.sum();
    }

    @Override
    public long getFailures() {
        return router.failures() + transformer.failures.sum();
    }

    @Override
    public String getPools() {
        return pools;
    }
}
