package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Magazines hold fewer objects as objects grow (Linux SLAB's per-CPU array limits), so that what a
 * live thread's magazines pin stays bounded in bytes: with 32 rounds at every size, a thread that had
 * released 64 KiB buffers kept 4 MiB of them per class after trim() (the echo soak: 226.7 MB reserved
 * after trim with one live buffer).
 */
class MagazineSizingTest {

    @Test
    void roundsFollowTheObjectSize() {
        assertThat(SlabCache.magazineRounds(32, 64)).isEqualTo(32);
        assertThat(SlabCache.magazineRounds(32, 4096)).isEqualTo(32);
        assertThat(SlabCache.magazineRounds(32, 4097)).isEqualTo(8);
        assertThat(SlabCache.magazineRounds(32, 65536)).isEqualTo(8);
        assertThat(SlabCache.magazineRounds(32, 128 * 1024)).isEqualTo(8);
        assertThat(SlabCache.magazineRounds(32, 128 * 1024 + 1)).isEqualTo(1);
        assertThat(SlabCache.magazineRounds(4, 65536)).as("a smaller configuration wins").isEqualTo(4);
        assertThat(SlabCache.magazineRounds(1, 64)).isEqualTo(1);
    }

    /** What slabinfo's {@code limit} column and the beans show comes from each cache, not from the configuration. */
    @Test
    void eachCachesStatisticsCarryItsOwnMagazineSizeAndRemoteBatch() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            for (final CacheStats c : a.stats().caches()) {
                assertThat(c.magazineRounds()).as("magazine size of %s", c.name())
                    .isEqualTo(c.objectSize() > 4096 ? 8 : 32);
                assertThat(c.remoteBatch()).as("remote-free batch of %s", c.name()).isEqualTo(RemoteBatches.BATCH);
            }
        }
    }

    @Test
    void aLiveThreadPinsAtMostTwoSmallMagazinesOfLargeObjectsAfterTrim() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            final List<ByteBuffer> l = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                l.add(a.allocateExplicit(65536));
            }
            l.forEach(a::free);
            a.trim();
            // this (live) thread's loaded and previous magazines: 2 x 8 x 64 KiB = 1 MiB, inside one
            // 4 MiB chunk when they hold neighbours; with 32 rounds 64 objects (4 MiB) stayed
            final CacheStats c = a.stats().caches().stream().filter(s -> s.objectSize() == 65536).findFirst().orElseThrow();
            assertThat(c.totalObjects()).as("objects of the 64 KiB class still in slabs after trim").isLessThanOrEqualTo(16 + 8);
            assertThat(a.stats().bytesReserved()).as("reserved after trim").isLessThanOrEqualTo(2L * (4 << 20) + 8192);
        }
    }
}
