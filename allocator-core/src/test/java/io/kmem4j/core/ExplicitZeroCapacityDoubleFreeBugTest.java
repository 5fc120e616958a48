package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * Bug (fixed in 5059a16): with {@code minCapacityBytes(0)} the slabs serve zero-capacity buffers, and
 * a second {@code free()} of a zero-capacity <em>explicit</em> buffer threw
 * {@code IllegalArgumentException("not a buffer of this allocator: ...")} instead of being counted in
 * {@code doubleFrees()} and ignored, as {@link SlabAllocator#free(ByteBuffer)} documents ("a second or
 * racing release is detected, counted ... and ignored").
 *
 * <p>Cause: {@code free()} recognised an already-freed explicit buffer by its cleared address only
 * when {@code buffer.capacity() > 0} ({@code if (address == 0 && buffer.capacity() > 0)}); a freed
 * zero-capacity buffer fell through to {@code pages.map.find(0)}, which finds no chunk, and was
 * rejected as foreign. A racing free that lost the CAS and re-read the address took the same path.
 * Found by {@link AllocatorModelTest}; jqwik's shrunk sequence is replayed in
 * {@link AllocatorModelRegressionTest}.
 */
class ExplicitZeroCapacityDoubleFreeBugTest {
    @Test
    void secondFreeOfAZeroCapacityExplicitBufferIsCountedNotRejected() {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().minCapacityBytes(0).build());
        try {
            final ByteBuffer b = a.allocateExplicit(0);
            assertThat(a.owns(b)).as("served from a slab").isTrue();
            a.free(b);
            assertThat(a.stats().explicitFrees()).isEqualTo(1);
            assertThatCode(() -> a.free(b)).as("second free() of an explicit buffer").doesNotThrowAnyException();
            assertThat(a.stats().doubleFrees()).isEqualTo(1);
        } finally {
            a.close();
        }
    }
}
