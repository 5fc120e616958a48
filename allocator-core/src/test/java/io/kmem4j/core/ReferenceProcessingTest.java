package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * {@link ReferenceProcessing}: before the page heap grows, the cleaners of buffers GC already found
 * are run (or waited for), so dropped buffers are reused instead of new chunks being taken from the
 * JDK's budget (the JDK's own {@code Bits.reserveMemory} helps the same way).
 */
class ReferenceProcessingTest {
    @Test
    void droppedBuffersFoundByGcAreReusedBeforeTheHeapGrows() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().chunkSizeBytes(1 << 20)
            .retainedEmptyChunks(4).reapIntervalMillis(60_000).build())) {
            final int perChunk = (1 << 20) / 4096;
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < perChunk - 16; i++) {
                    a.allocate(4096); // dropped at once
                }
                System.gc(); // finds them; their cleaners are pending in the JDK
            }
            assertThat(a.stats().chunksAllocated())
                .as("chunks taken for five rounds of a chunk's worth of dropped buffers").isLessThanOrEqualTo(2);
        }
    }

    @Test
    void helpingWithNothingPendingReturnsAtOnce() {
        System.gc();
        ReferenceProcessing.help(null);
        assertThat(ReferenceProcessing.help(null)).as("nothing pending any more").isFalse();
        final ByteBuffer keep = ByteBuffer.allocateDirect(1);
        assertThat(keep.isDirect()).isTrue();
    }
}
