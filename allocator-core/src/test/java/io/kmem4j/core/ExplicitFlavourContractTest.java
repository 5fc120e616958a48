package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/** The contract for the explicit (no cleaner) flavour, plus what only that flavour promises. */
class ExplicitFlavourContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.defaults();
    }

    @Override
    Flavour flavour() {
        return Flavour.EXPLICIT;
    }

    @Test
    void explicitBuffersHaveNoCleanerAndGcNeverFreesThem() throws Exception {
        ByteBuffer b = allocator.allocateExplicit(300);
        assertThat(JdkInternals.cleaner(b)).isNull();
        final long a = address(b);
        b = null;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
        }
        final AllocatorStats s = allocator.stats();
        assertThat(s.frees()).isZero();
        assertThat(s.liveBuffers()).isEqualTo(1);
        assertThat(a).isNotZero();
    }

    @Test
    void secondFreeIsDetectedCountedAndIgnored() {
        final ByteBuffer b = allocator.allocateExplicit(128);
        allocator.free(b);
        allocator.free(b);
        final AllocatorStats s = allocator.stats();
        assertThat(s.frees()).isEqualTo(1);
        assertThat(s.doubleFrees()).isEqualTo(1);
        final ByteBuffer x = allocator.allocateExplicit(128);
        final ByteBuffer y = allocator.allocateExplicit(128);
        assertThat(address(x)).isNotEqualTo(address(y));
    }

    @Test
    void foreignCleanerlessBufferIsRefusedAndNothingChanges() {
        final ByteBuffer backing = ByteBuffer.allocateDirect(256);
        final ByteBuffer foreign = JdkInternals.newDirectBuffer(256, address(backing), null);
        final AllocatorStats before = allocator.stats();
        assertThatThrownBy(() -> allocator.free(foreign)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not a buffer of this allocator");
        assertThat(allocator.stats().frees()).isEqualTo(before.frees());
        assertThat(address(foreign)).isEqualTo(address(backing));
    }

    @Test
    void unservedSizesComeFromTheJdkAndFreeReleasesThem() {
        final ByteBuffer big = allocator.allocateExplicit(allocator.maxCapacity() + 1);
        assertThat(allocator.owns(big)).isFalse();
        assertThat(JdkInternals.cleaner(big)).isNotNull();
        allocator.free(big);
        assertThatThrownBy(() -> allocator.allocateExplicit(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
