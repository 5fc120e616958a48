package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** {@link SlabAllocator#onReap}: a layer above gives back what it keeps for ended threads; size-class lookups. */
class ReapTasksTest {
    @Test
    void aTaskRunsAtEachPassAndTrimAndAFailingOneIsCountedWithoutStoppingTheOthers() {
        // no background pass during the test: the counts below are of the passes it runs
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            final ByteBuffer[] kept = {allocator.allocateExplicit(4096)};
            final AtomicInteger runs = new AtomicInteger();
            allocator.onReap(() -> {
                throw new IllegalStateException("a failing layer");
            });
            allocator.onReap(() -> {
                runs.incrementAndGet();
                if (kept[0] != null) {
                    allocator.free(kept[0]); // what a layer above kept for an ended thread
                    kept[0] = null;
                }
            });
            allocator.trim();
            assertThat(runs.get()).isEqualTo(1);
            assertThat(allocator.stats().liveBuffers()).isZero();
            assertThat(allocator.stats().hookFailures()).isEqualTo(1);
            allocator.reap();
            assertThat(runs.get()).isEqualTo(2);
            assertThat(allocator.stats().hookFailures()).isEqualTo(2);
        }
    }

    @Test
    void aNullTaskIsRefused() {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            assertThatThrownBy(() -> allocator.onReap(null)).isInstanceOf(NullPointerException.class).hasMessage("task");
        }
    }

    @Test
    void sizeClassLookupsMatchTheClassesServed() {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            assertThat(allocator.sizeClassBytes(allocator.sizeClassCount() - 1)).isEqualTo(allocator.maxCapacity());
            for (final int capacity : new int[] {1, 64, 65, 900, 1024, 1025, 65536}) {
                final int cls = allocator.sizeClassIndex(capacity);
                final int size = allocator.sizeClassBytes(cls);
                assertThat(size).as("class of %s", capacity).isGreaterThanOrEqualTo(capacity);
                assertThat(cls == 0 || allocator.sizeClassBytes(cls - 1) < capacity).as("smallest class for %s", capacity)
                    .isTrue();
            }
            assertThat(allocator.sizeClassBytes(allocator.sizeClassIndex(900))).isEqualTo(1024);
        }
    }
}
