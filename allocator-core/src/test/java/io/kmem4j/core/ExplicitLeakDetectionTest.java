package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Explicit buffers collected without free(): counted, and their blocks come back. */
class ExplicitLeakDetectionTest {
    @Test
    void aDroppedExplicitBufferIsCountedAndRecoveredAndAFreedOneIsNot() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().explicitLeakDetection(true).build())) {
            a.free(a.allocateExplicit(1000)); // freed properly: not a leak
            final ByteBuffer kept = a.allocateExplicit(2000);
            dropOne(a);
            Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
                System.gc();
                return a.stats().leaksDetected() == 1;
            });
            final AllocatorStats s = a.stats();
            assertThat(s.leaksDetected()).isEqualTo(1);
            assertThat(s.liveBuffers()).as("the leaked block was given back; the kept one is live").isEqualTo(1);
            assertThat(s.bytesInUse()).isEqualTo(2000);
            a.free(kept);
            assertThat(a.stats().leaksDetected()).isEqualTo(1);
            assertThat(a.stats().liveBuffers()).isZero();
        }
    }

    @Test
    void offByDefault() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            dropOne(a);
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            assertThat(a.stats().leaksDetected()).isZero();
            assertThat(a.stats().liveBuffers()).as("without detection an unfreed explicit buffer stays taken").isEqualTo(1);
        }
    }

    private static void dropOne(final SlabAllocator a) {
        final ByteBuffer leaked = a.allocateExplicit(3000);
        leaked.put(0, (byte) 1);
    }
}
