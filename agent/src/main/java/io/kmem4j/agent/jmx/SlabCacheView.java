package io.kmem4j.agent.jmx;

import java.util.List;

import io.kmem4j.core.CacheStats;
import io.kmem4j.core.SlabAllocatorConfig;

/**
 * {@link SlabCacheMXBean} for one cache, read from the {@link StatsSnapshots} shared with the
 * Allocator bean and the other caches (no {@code stats()} call of its own). Threads: any.
 */
public final class SlabCacheView implements SlabCacheMXBean {
    private final StatsSnapshots snapshots;
    private final int index;
    private final String name;
    private final CacheStats absent;

    /**
     * @param snapshots the shared snapshot source
     * @param index     the cache's position in {@code AllocatorStats.caches()}
     * @param first     the cache's statistics when the bean is made (its fixed figures: name, sizes)
     */
    public SlabCacheView(final StatsSnapshots snapshots, final int index, final CacheStats first) {
        this.snapshots = snapshots;
        this.index = index;
        this.name = first.name();
        this.absent = new CacheStats(first.name(), first.cacheId(), first.objectSize(), first.objectsPerSlab(),
            first.pagesPerSlab(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0, first.magazineRounds(), first.remoteBatch());
    }

    private StatsSnapshots.Snapshot snapshot() {
        return snapshots.get();
    }

    private CacheStats stats() {
        return find(snapshot());
    }

    private CacheStats find(final StatsSnapshots.Snapshot s) {
        final List<CacheStats> caches = s.stats().caches();
        if (index < caches.size() && caches.get(index).name().equals(name)) {
            return caches.get(index);
        }
        for (final CacheStats c : caches) { // the list has a fixed order; this is only a safety net
            if (c.name().equals(name)) {
                return c;
            }
        }
        return absent;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public int getCacheId() {
        return stats().cacheId();
    }

    @Override
    public int getObjectSize() {
        return absent.objectSize();
    }

    @Override
    public int getObjectsPerSlab() {
        return absent.objectsPerSlab();
    }

    @Override
    public int getPagesPerSlab() {
        return absent.pagesPerSlab();
    }

    @Override
    public long getSlabs() {
        return stats().slabs();
    }

    @Override
    public long getPartialSlabs() {
        return stats().partialSlabs();
    }

    @Override
    public long getActiveObjects() {
        return stats().activeObjects();
    }

    @Override
    public long getTotalObjects() {
        return stats().totalObjects();
    }

    @Override
    public long getActiveBytes() {
        final CacheStats c = stats();
        return c.activeObjects() * c.objectSize();
    }

    @Override
    public long getSlabBytes() {
        final CacheStats c = stats();
        return c.slabs() * c.pagesPerSlab() * (long) SlabAllocatorConfig.PAGE_SIZE_BYTES;
    }

    @Override
    public long getAllocations() {
        return stats().allocations();
    }

    @Override
    public long getFrees() {
        return stats().frees();
    }

    @Override
    public long getMagazineHits() {
        return stats().magazineHits();
    }

    @Override
    public long getMagazineMisses() {
        return stats().magazineMisses();
    }

    @Override
    public double getMagazineHitRate() {
        return stats().magazineHitRate();
    }

    @Override
    public long getDepotExchanges() {
        return stats().depotExchanges();
    }

    @Override
    public long getDepotObjects() {
        return stats().depotObjects();
    }

    @Override
    public double getAddressOrderScore() {
        return stats().addressOrderScore();
    }

    @Override
    public long getDoubleFrees() {
        return stats().doubleFrees();
    }

    @Override
    public long getSnapshotSequence() {
        return snapshot().sequence();
    }
}
