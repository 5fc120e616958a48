package io.kmem4j.agent.jmx;

import java.util.ArrayList;
import java.util.List;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;

/** Synthetic statistics for the JMX tests. */
final class TestStats {
    private TestStats() {
    }

    /**
     * @param objectSize     size class
     * @param objectsPerSlab objects per slab
     * @param slabs          slabs held
     * @param active         active objects
     * @param allocations    allocations (frees = allocations - active)
     */
    static CacheStats cache(final int objectSize, final int objectsPerSlab, final long slabs, final long active,
                            final long allocations) {
        final int pages = Math.max(1, objectSize * objectsPerSlab / 65536);
        return new CacheStats("kmem4j-" + objectSize, objectSize / 64, objectSize, objectsPerSlab, pages, slabs,
            slabs > 0 ? 1 : 0, active, slabs * objectsPerSlab, allocations, allocations - active,
            allocations * 9 / 10, allocations - allocations * 9 / 10, 3, 5, 0.75, 0, objectSize > 4096 ? 8 : 32, 32);
    }

    /** Allocator figures summed from {@code caches}; bytesInUse = sum(active * size) - 100 per live object. */
    static AllocatorStats stats(final List<CacheStats> caches) {
        long allocations = 0;
        long frees = 0;
        long bytes = 0;
        long hits = 0;
        long misses = 0;
        for (final CacheStats c : caches) {
            allocations += c.allocations();
            frees += c.frees();
            bytes += c.activeObjects() * (c.objectSize() - 10);
            hits += c.magazineHits();
            misses += c.magazineMisses();
        }
        return new AllocatorStats(allocations, frees - frees / 4, frees / 4, bytes, 8L << 20, 7, 11, 10, 2, hits,
            misses, 2, 3, 1, 0, 5, 4, 1, caches.size(), 0, 0, 0, 0, List.copyOf(caches));
    }

    static AllocatorStats sample() {
        final List<CacheStats> caches = new ArrayList<>();
        caches.add(cache(64, 1024, 1, 4, 100));
        caches.add(cache(4096, 16, 3, 40, 1000));
        caches.add(cache(65536, 8, 0, 0, 0));
        return stats(caches);
    }
}
