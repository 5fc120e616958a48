package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * kmem4j's chunks fill the direct-memory budget with buffers the program dropped: the allocator
 * asks for the collection the JDK would run now and serves the request from what GC gave back,
 * instead of passing it to the JDK's path (whose {@code Bits.reserveMemory} would collect too, then
 * sleep until memory came back to the JDK's account, which kmem4j's frees never do).
 */
class CollectAtTheLimitTest {
    private static final int SIZE = 4096;

    @Test
    void droppedBuffersFillingTheBudgetAreCollectedAndServedAgain() throws Exception {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());
        long take = 0;
        try {
            // one chunk of our own, then nothing more under the limit than less than one chunk
            final ByteBuffer first = a.allocate(SIZE);
            assertThat(a.owns(first)).isTrue();
            take = TestSupport.exhaustBudgetLeavingOneMebibyte();
            final long perChunk = a.stats().bytesReserved() / SIZE;
            final long fallbacksBefore = a.stats().fallbacks();
            final long gcFreesBefore = a.stats().gcFrees();
            ReferenceProcessing.awaitCollectionAllowed(); // another test of this JVM may have asked for one a moment ago
            // more than the chunk holds, each buffer dropped at once: only GC can give their memory back
            final long n = perChunk + 8;
            int served = 0;
            for (long i = 0; i < n; i++) {
                final ByteBuffer b = a.tryAllocate(SIZE);
                if (b != null) {
                    served++;
                    b.putLong(0, i);
                }
            }
            assertThat(a.stats().chunks()).as("chunks: the budget allows no second one").isEqualTo(1);
            assertThat(a.stats().gcFrees() - gcFreesBefore).as("buffers GC gave back to kmem4j").isPositive();
            assertThat(served).as("buffers served from kmem4j's one chunk of %d objects, each dropped at once (fallbacks %d)",
                perChunk, a.stats().fallbacks() - fallbacksBefore).isEqualTo((int) n);
        } finally {
            if (take > 0) {
                JdkInternals.unreserveDirectMemory(take);
            }
            a.close();
        }
    }
}
