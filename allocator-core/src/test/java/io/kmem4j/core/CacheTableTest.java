package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link CacheTable}: the JVM-wide table of 65,535 cache ids. Each allocator
 * registers one cache per size class; ids come back when a cache has no slab left at close, so
 * creating and closing allocators never exhausts the table (before, about 1,820 of them did).
 */
class CacheTableTest {
    @Test
    void closingAnEmptyAllocatorReleasesItsCacheIds() throws InterruptedException {
        final int before = CacheTable.used();
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0).build());
        final int classes = a.stats().caches().size();
        assertThat(CacheTable.used()).isEqualTo(before + classes);
        final Thread t = new Thread(() -> a.free(a.allocateExplicit(100)));
        t.start();
        t.join();
        a.reap();
        a.close();
        assertThat(a.stats().chunks()).as("no slab and no chunk left").isZero();
        assertThat(CacheTable.used()).as("cache ids in use after close (was %d before, the allocator took %d)",
            before, classes).isEqualTo(before);
    }

    @Test
    void closingAnUnusedAllocatorReleasesItsCacheIds() {
        final int before = CacheTable.used();
        new SlabAllocator(SlabAllocatorConfig.defaults()).close();
        assertThat(CacheTable.used()).as("cache ids in use after new + close").isEqualTo(before);
    }

    @Test
    void aCacheIsFoundByItsIdAndIdZeroIsNeverUsed() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final SlabCache c = a.cache(0);
            assertThat(c.id).isPositive();
            assertThat(CacheTable.get(c.id)).isSameAs(c);
        }
    }
}
