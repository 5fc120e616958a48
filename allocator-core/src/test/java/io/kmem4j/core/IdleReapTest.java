package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A burst followed by quiet, on a thread that stays alive: the reaper gives the burst's chunks back
 * to the JDK's budget without {@code trim()} (found by the benchmarks' memory workload: before, every
 * chunk of the peak stayed reserved until a thread ended or someone called trim).
 */
class IdleReapTest {
    private static final int BUFFERS = 4096;
    private static final int SIZE = 16 * 1024; // 64 MiB in all: 16 chunks of 4 MiB

    @Test
    void aBurstThenQuietReleasesItsChunksWhileItsThreadLives() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder()
            .retainedEmptyChunks(1).reapIntervalMillis(50).build())) {
            final List<ByteBuffer> burst = new ArrayList<>(BUFFERS);
            for (int i = 0; i < BUFFERS; i++) {
                burst.add(a.allocateExplicit(SIZE));
            }
            final int peakChunks = a.stats().chunks();
            assertThat(peakChunks).as("chunks at the peak").isGreaterThanOrEqualTo(16);
            for (final ByteBuffer b : burst) {
                a.free(b);
            }
            // before the idle reap: 5 chunks stayed (the depot's 16 magazines of 32 objects, 8 MiB, and
            // the spare slab pin them). Now: this thread's two magazines (2 x 32 objects of 16 KiB =
            // 1 MiB) may pin one chunk, retainedEmptyChunks keeps one more
            Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(a.stats().chunks()).as("chunks after the burst, quiet, no trim (reserved %d bytes)", a.stats().bytesReserved())
                    .isLessThanOrEqualTo(2));
            assertThat(a.stats().trims()).isZero();
            assertThat(a.stats().threadCachesRetired()).isZero();
            assertThat(a.stats().liveBuffers()).isZero();
            // and the allocator still serves from what it kept
            final ByteBuffer again = a.allocateExplicit(SIZE);
            assertThat(a.owns(again)).isTrue();
            a.free(again);
        }
    }
}
