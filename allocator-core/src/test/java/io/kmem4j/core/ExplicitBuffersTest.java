package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/** Unit tests of {@link ExplicitBuffers}: identity and the exactly-once release of the explicit flavour. */
class ExplicitBuffersTest {
    /**
     * With {@code minCapacityBytes(0)} the slabs serve zero-capacity buffers; a freed one is recognised
     * by its cleared address like any other (it once fell through to the foreign-buffer check and was
     * refused with "not a buffer of this allocator"; found by {@link AllocatorModelTest}).
     */
    @Test
    void aSecondFreeOfAZeroCapacityExplicitBufferIsCountedNotRejected() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().minCapacityBytes(0).build())) {
            final ByteBuffer b = a.allocateExplicit(0);
            assertThat(a.owns(b)).as("served from a slab").isTrue();
            assertThat(a.isExplicit(b)).isTrue();
            assertThat(a.freeOnce(b)).isTrue();
            assertThat(a.stats().explicitFrees()).isEqualTo(1);
            assertThatCode(() -> a.free(b)).as("second free() of an explicit buffer").doesNotThrowAnyException();
            assertThat(a.freeOnce(b)).as("a third").isFalse();
            assertThat(a.stats().doubleFrees()).isEqualTo(2);
        }
    }

    @Test
    void aDetachedBufferHasAddressZeroUntilReattachedAndAFreeMeanwhileChangesNothing() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final ByteBuffer b = a.allocateExplicit(100);
            b.put(0, (byte) 42);
            final long address = a.detach(b);
            assertThat(address).isNotZero();
            assertThat(TestSupport.address(b)).isZero();
            assertThat(a.detach(b)).as("detached already").isZero();
            assertThat(a.freeOnce(b)).as("a free while detached").isFalse();
            a.reattach(b, address);
            assertThat(b.get(0)).as("contents kept").isEqualTo((byte) 42);
            assertThat(a.freeOnce(b)).isTrue();
            assertThat(a.stats().liveBuffers()).isZero();
        }
    }
}
