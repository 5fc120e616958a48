package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link SlabAllocator#freeIfExplicit}: this allocator's explicit roots go back once; anything else is left alone. */
class FreeIfExplicitTest {
    private final SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults());

    @AfterEach
    void close() {
        allocator.close();
    }

    @Test
    void anExplicitRootGoesBackOnce() {
        final ByteBuffer b = allocator.allocateExplicit(1000);
        assertThat(allocator.freeIfExplicit(b)).isTrue();
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(allocator.freeIfExplicit(b)).as("released already: no longer this allocator's").isFalse();
        assertThat(allocator.stats().doubleFrees()).isZero();
        assertThat(allocator.stats().explicitFrees()).isEqualTo(1);
    }

    @Test
    void everythingElseIsLeftUnchanged() {
        final ByteBuffer tracked = allocator.allocate(1000);
        final ByteBuffer explicit = allocator.allocateExplicit(1000);
        final ByteBuffer jdk = ByteBuffer.allocateDirect(1000);
        final ByteBuffer other;
        try (SlabAllocator second = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            other = second.allocateExplicit(1000);
            assertThat(allocator.freeIfExplicit(other)).as("another allocator's block").isFalse();
            assertThat(second.freeIfExplicit(other)).isTrue();
        }
        assertThat(allocator.freeIfExplicit(null)).isFalse();
        assertThat(allocator.freeIfExplicit(ByteBuffer.allocate(16))).isFalse();
        assertThat(allocator.freeIfExplicit(jdk)).isFalse();
        assertThat(allocator.freeIfExplicit(tracked)).as("a buffer with a cleaner").isFalse();
        assertThat(allocator.freeIfExplicit(explicit.slice(0, 10))).as("a view").isFalse();
        assertThat(allocator.freeIfExplicit(explicit.duplicate())).as("a view").isFalse();
        assertThat(allocator.stats().liveBuffers()).as("nothing freed").isEqualTo(2);
        allocator.free(tracked);
        allocator.free(explicit);
    }
}
