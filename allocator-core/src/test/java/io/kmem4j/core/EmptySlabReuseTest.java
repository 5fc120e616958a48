package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Empty slabs stay in their cache (GC gives dropped buffers back in bursts the next allocations
 * need again), but never at the price of growth: before the page heap grows for one size class, the
 * empty slabs of every other class go back to the page heap and are carved for it.
 */
class EmptySlabReuseTest {
    private static final int BUFFERS = 2048;
    private static final int SMALL = 4096; // 8 MiB in all: two chunks of 4 MiB
    private static final int LARGE = 8192;

    private static SlabAllocator allocator() {
        // a reaper that does not run during the test: only the allocation path gives slabs back
        return new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
    }

    @Test
    void emptiedSlabsAreReusedWithoutCarvingNewOnes() {
        try (SlabAllocator a = allocator()) {
            final List<ByteBuffer> burst = burst(a, SMALL);
            final long slabs = slabs(a, SMALL);
            final long grown = a.pages.chunksAllocated();
            burst.forEach(a::free);
            assertThat(slabs(a, SMALL)).as("slabs of the class once all its buffers are freed: kept, empty").isEqualTo(slabs);
            burst.clear();
            burst.addAll(burst(a, SMALL));
            assertThat(slabs(a, SMALL)).as("slabs after a second, equal burst").isEqualTo(slabs);
            assertThat(a.pages.chunksAllocated()).as("chunks grown for the second burst").isEqualTo(grown);
            burst.forEach(a::free);
        }
    }

    @Test
    void anotherSizeClassTakesTheEmptySlabsBeforeTheHeapGrows() {
        try (SlabAllocator a = allocator()) {
            final List<ByteBuffer> small = burst(a, SMALL);
            final int chunks = a.stats().chunks();
            final long smallSlabs = slabs(a, SMALL);
            small.forEach(a::free);
            final List<ByteBuffer> large = new ArrayList<>();
            for (int i = 0; i < BUFFERS / 2 - 2 * SlabAllocatorConfig.defaults().magazineRounds(); i++) {
                large.add(a.allocateExplicit(LARGE));
            }
            assertThat(a.stats().chunks()).as("chunks after the same bytes in another size class (%d before)", chunks)
                .isLessThanOrEqualTo(chunks + 1);
            assertThat(slabs(a, SMALL)).as("the small class's empty slabs went back to the page heap (%d before)", smallSlabs)
                .isLessThan(smallSlabs);
            large.forEach(a::free);
        }
    }

    private static long slabs(final SlabAllocator a, final int objectSize) {
        return a.stats().caches().stream().filter(c -> c.objectSize() == objectSize).findFirst().orElseThrow().slabs();
    }

    private static List<ByteBuffer> burst(final SlabAllocator a, final int size) {
        final List<ByteBuffer> burst = new ArrayList<>(BUFFERS);
        for (int i = 0; i < BUFFERS; i++) {
            burst.add(a.allocateExplicit(size));
        }
        return burst;
    }
}
