package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * kmem4j's chunks fill the direct-memory budget with buffers the program dropped, and the request
 * would not fit on the JDK's path either: the allocator asks for the collection the JDK would run
 * now and serves the request from what GC gave back, instead of passing it to the JDK's path (whose
 * {@code Bits.reserveMemory} would collect too, then sleep until memory came back to the JDK's
 * account, which kmem4j's frees never do). Collections that give nothing back wait longer.
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
            take = TestSupport.exhaustBudgetLeaving(SIZE / 2); // the JDK's path could not serve a request either
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

    @Test
    void collectionsThatGiveNothingBackWaitLongerUpToALimit() throws Exception {
        ReferenceProcessing.awaitCollectionAllowed();
        try {
            ReferenceProcessing.collected(false);
            assertThat(ReferenceProcessing.intervalNanos()).isEqualTo(2 * ReferenceProcessing.MIN_COLLECTION_INTERVAL_NANOS);
            assertThat(ReferenceProcessing.collect()).as("right after a collection that gave nothing back").isFalse();
            for (int i = 0; i < 20; i++) {
                ReferenceProcessing.collected(false);
            }
            assertThat(ReferenceProcessing.intervalNanos()).isEqualTo(ReferenceProcessing.MAX_COLLECTION_INTERVAL_NANOS);
            ReferenceProcessing.collected(true);
            assertThat(ReferenceProcessing.intervalNanos()).as("one that gave memory back: the least wait again")
                .isEqualTo(ReferenceProcessing.MIN_COLLECTION_INTERVAL_NANOS);
        } finally {
            ReferenceProcessing.resetCollectionWaits();
        }
    }
}
