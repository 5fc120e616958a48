package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static io.kmem4j.core.TestSupport.fill;
import static io.kmem4j.core.TestSupport.firstNot;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code zeroing(false)} (the allocator behind Netty's buffers, whose pooled contract is "as the last
 * user left it"): a recycled block keeps its bytes on every route, so no zeroing is paid anywhere,
 * while the buffer's shape stays the contract's. The default allocator zeroes the same blocks
 * (control: the test would pass vacuously if recycling gave a different block). In debug mode the
 * free's poison is what a recycled block shows: nothing zeroes it either.
 */
class NoZeroingTest {
    /** What a recycled block holds: its last user's bytes, or in debug mode the poison of the free. */
    private static final byte LEFT = Debug.ON ? Debug.POISON : (byte) 0x5A;
    private SlabAllocator allocator;

    @AfterEach
    void close() {
        if (allocator != null) {
            allocator.close();
        }
    }

    @Test
    void aRecycledBlockKeepsWhatItsLastUserWrote() {
        allocator = new SlabAllocator(SlabAllocatorConfig.builder().zeroing(false).build());
        for (final int size : new int[] {64, 1000, 4096, 65536}) {
            final ByteBuffer b = allocator.allocateExplicit(size);
            final long at = address(b);
            fill(b, (byte) 0x5A);
            allocator.free(b);
            final ByteBuffer again = allocator.allocateExplicit(size);
            assertThat(address(again)).as("the same block back from the magazine, %d B", size).isEqualTo(at);
            assertThat(firstNot(again, LEFT)).as("not zeroed, %d B", size).isEqualTo(-1);
            assertShape(again, size);
            allocator.free(again);
        }
    }

    @Test
    void aBlockFreedOnAnotherThreadIsNotZeroedByItsOwnerEither() throws Exception {
        allocator = new SlabAllocator(SlabAllocatorConfig.builder().zeroing(false).magazineRounds(2).build());
        final ByteBuffer[] held = new ByteBuffer[64];
        for (int i = 0; i < held.length; i++) {
            held[i] = allocator.allocateExplicit(1000);
            fill(held[i], (byte) 0x5A);
        }
        final ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            other.submit(() -> {
                for (final ByteBuffer b : held) {
                    allocator.free(b);
                }
            }).get(30, TimeUnit.SECONDS);
        } finally {
            other.shutdown();
        }
        int dirty = 0;
        for (int i = 0; i < held.length * 2; i++) {
            final ByteBuffer b = allocator.allocateExplicit(1000);
            // the owner took the deferred frees back: only the link word (first 8 bytes) is cleared
            if (firstNot(b.slice(8, 992), LEFT) == -1) {
                dirty++;
            }
            assertShape(b, 1000);
        }
        assertThat(dirty).as("blocks freed on another thread come back unzeroed").isPositive();
    }

    @Test
    void aBlocksFirstHandOutIsZeroedAllTheSame() {
        allocator = new SlabAllocator(SlabAllocatorConfig.builder().zeroing(false).build());
        final ByteBuffer first = allocator.allocateExplicit(64);
        final Chunk chunk = allocator.pages.map.find(address(first));
        // what malloc may hand a new chunk: another user's bytes, everywhere no slab has handed out yet
        final long from = chunk.base + (64 << 10);
        org.agrona.UnsafeApi.setMemory(from, chunk.size - (64 << 10), (byte) 0x5A);
        for (final int size : new int[] {1000, 4096, 30000}) {
            final ByteBuffer b = allocator.allocateExplicit(size);
            assertThat(address(b)).as("from the dirtied part of the chunk").isGreaterThanOrEqualTo(from);
            assertThat(firstNot(b, (byte) 0)).as("a virgin block of %d B is zeroed", size).isEqualTo(-1);
            allocator.free(b);
        }
        allocator.free(first);
    }

    @Test
    void theDefaultAllocatorZeroesTheSameBlock() {
        allocator = new SlabAllocator(SlabAllocatorConfig.builder().build());
        final ByteBuffer b = allocator.allocateExplicit(1000);
        final long at = address(b);
        fill(b, (byte) 0x5A);
        allocator.free(b);
        final ByteBuffer again = allocator.allocateExplicit(1000);
        assertThat(address(again)).isEqualTo(at);
        assertThat(firstNot(again, (byte) 0)).isEqualTo(-1);
    }

    private static void assertShape(final ByteBuffer b, final int size) {
        assertThat(b.isDirect()).isTrue();
        assertThat(b.capacity()).isEqualTo(size);
        assertThat(b.limit()).isEqualTo(size);
        assertThat(b.position()).isZero();
        assertThat(b.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        assertThat(address(b) & 63).as("cache-line aligned").isZero();
    }
}
