package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.time.Duration;

import org.agrona.UnsafeApi;
import org.awaitility.Awaitility;
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
    void explicitBuffersHaveNoCleanerAndGcNeverFreesThem() {
        ByteBuffer b = allocator.allocateExplicit(300);
        assertThat(JdkInternals.cleaner(b)).isNull();
        final long a = address(b);
        for (int i = 0; i < 300; i++) {
            b.put(i, (byte) 0x5A);
        }
        final WeakReference<ByteBuffer> collected = new WeakReference<>(b);
        b = null;
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            System.gc();
            return collected.get() == null;
        });
        final AllocatorStats s = allocator.stats();
        assertThat(s.frees()).as("frees after the buffer was collected").isZero();
        assertThat(s.liveBuffers()).isEqualTo(1);
        final Chunk c = allocator.pages.map.find(a);
        assertThat(c.slabs[c.pageOf(a)].mayBeHandedOut(a, 300, allocator.classes))
            .as("the block is still taken in its slab's bitmap").isTrue();
        for (int i = 0; i < 300; i++) {
            assertThat(UnsafeApi.getByte(a + i)).as("byte %d of the collected buffer's block", i).isEqualTo((byte) 0x5A);
        }
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
