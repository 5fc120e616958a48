package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The entry points the agent's pool support uses: tryAllocateExplicit, isExplicit, ownsMemoryOf. */
class PoolEntryPointsTest {
    private final SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults());

    @AfterEach
    void close() {
        allocator.close();
    }

    @Test
    void tryAllocateExplicitServesTheWindowAndAnswersNullOutsideIt() {
        final ByteBuffer b = allocator.tryAllocateExplicit(1000);
        assertThat(b.capacity()).isEqualTo(1000);
        assertThat(allocator.isExplicit(b)).isTrue();
        assertThat(allocator.tryAllocateExplicit(allocator.maxCapacity() + 1)).isNull();
        assertThat(allocator.tryAllocateExplicit(0)).as("below minCapacityBytes (1)").isNull();
        assertThat(allocator.tryAllocateExplicit(-1)).isNull();
        assertThat(allocator.stats().fallbacks()).isEqualTo(3);
        allocator.free(b);
        assertThat(allocator.isExplicit(b)).as("freed: its address is 0").isFalse();
        assertThat(allocator.ownsMemoryOf(b)).isFalse();
    }

    @Test
    void ownsMemoryOfSeesViewsOwnsSeesRootsOnly() {
        final ByteBuffer tracked = allocator.allocate(4096);
        final ByteBuffer explicit = allocator.tryAllocateExplicit(4096);
        assertThat(allocator.isExplicit(tracked)).as("a tracked buffer has a cleaner").isFalse();
        for (final ByteBuffer root : new ByteBuffer[] {tracked, explicit}) {
            assertThat(allocator.owns(root)).isTrue();
            assertThat(allocator.ownsMemoryOf(root)).isTrue();
            for (final ByteBuffer view : new ByteBuffer[] {root.slice(100, 10), root.duplicate(), root.asReadOnlyBuffer()}) {
                assertThat(allocator.owns(view)).isFalse();
                assertThat(allocator.ownsMemoryOf(view)).isTrue();
            }
        }
        for (final ByteBuffer foreign : new ByteBuffer[] {ByteBuffer.allocate(10), ByteBuffer.allocateDirect(10), null}) {
            assertThat(allocator.ownsMemoryOf(foreign)).isFalse();
            assertThat(allocator.isExplicit(foreign)).isFalse();
        }
    }
}
