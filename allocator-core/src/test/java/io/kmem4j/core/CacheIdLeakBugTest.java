package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * Bug: a closed {@link SlabAllocator} never gives its cache ids back. Each allocator registers one
 * {@link SlabCache} per size class (36 with the default 64 KiB largest class) in the JVM-wide
 * {@link CacheTable} of 65 535 ids, and nothing ever calls {@link SlabCache#retireIfEmpty()} (whose
 * javadoc says it is "called when its allocator closes"; {@link CacheTable}'s javadoc says ids are
 * released when a cache has no slab left). {@link SlabAllocator#close()} only stops the reaper and
 * trims. So after about 1 820 allocators have been created and closed in one JVM, every further
 * {@code new SlabAllocator(...)} throws {@code IllegalStateException("cache id space exhausted")}
 * (visible as {@link AllocatorStats#cacheIdsInUse()} growing without bound).
 */
class CacheIdLeakBugTest {
    @Test
    void closingAnEmptyAllocatorReleasesItsCacheIds() {
        final int before = CacheTable.used();
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0).build());
        final int classes = a.stats().caches().size();
        assertThat(CacheTable.used()).isEqualTo(before + classes);
        final Thread t = new Thread(() -> a.free(a.allocateExplicit(100)));
        t.start();
        try {
            t.join();
        } catch (final InterruptedException e) {
            throw new AssertionError(e);
        }
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
}
