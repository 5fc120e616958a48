package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ChunkMapTest {
    private static final int SMALL = 256 << 10;           // 4 pages
    private static final int PAGE = SlabAllocatorConfig.PAGE_SIZE_BYTES;

    private static void releaseAll(final List<Chunk> chunks) {
        for (final Chunk c : chunks) {
            c.release();
        }
    }

    // ---------------------------------------------------------------- Chunk geometry

    @Test
    void allocatedChunkIsPageCountedAndAligned() {
        assertThat(JdkInternals.failure()).isNull();
        final Chunk chunk = Chunk.allocate(SMALL);
        try {
            assertThat(chunk.base % 4096).isZero();
            assertThat(chunk.base).isGreaterThanOrEqualTo(chunk.raw).isLessThan(chunk.raw + 4096);
            assertThat(chunk.size).isEqualTo(SMALL);
            assertThat(chunk.pages).isEqualTo(4);
            assertThat(chunk.reservedBytes).isEqualTo(SMALL + 4096L);
            // the aligned region fits in the raw block
            assertThat(chunk.base + chunk.size).isLessThanOrEqualTo(chunk.raw + chunk.reservedBytes);
            assertThat(chunk.usedPages()).isZero();
            assertThat(chunk.contains(chunk.base)).isTrue();
            assertThat(chunk.contains(chunk.base + SMALL - 1)).isTrue();
            assertThat(chunk.contains(chunk.base - 1)).isFalse();
            assertThat(chunk.contains(chunk.base + SMALL)).isFalse();
            assertThat(chunk.pageOf(chunk.base + PAGE)).isEqualTo(1);
            assertThat(chunk.pageOf(chunk.base + 3L * PAGE + PAGE - 1)).isEqualTo(3);
            assertThat(chunk.pageAddress(2)).isEqualTo(chunk.base + 2L * PAGE);
        } finally {
            chunk.release();
        }
    }

    // ---------------------------------------------------------------- ChunkMap

    @Test
    void findOneChunk() {
        final Chunk chunk = Chunk.allocate(SMALL);
        final ByteBuffer foreign = ByteBuffer.allocateDirect(4096);
        try {
            final ChunkMap map = new ChunkMap(SMALL);
            assertThat(map.find(chunk.base)).isNull();
            map.add(chunk);
            assertThat(map.size()).isEqualTo(1);
            assertThat(map.chunks()).containsExactly(chunk);

            final long base = chunk.base;
            final long size = chunk.size;
            assertThat(map.find(base)).isSameAs(chunk);
            assertThat(map.find(base + size - 1)).isSameAs(chunk);
            assertThat(map.find(base + size / 2)).isSameAs(chunk);
            for (int p = 0; p < chunk.pages; p++) {
                assertThat(map.find(chunk.pageAddress(p))).isSameAs(chunk);
                assertThat(map.find(chunk.pageAddress(p) + PAGE - 1)).isSameAs(chunk);
            }
            assertThat(map.find(base - 1)).isNull();
            assertThat(map.find(base + size)).isNull();
            assertThat(map.find(0)).isNull();
            assertThat(map.find(Long.MAX_VALUE)).isNull();
            assertThat(map.find(-1L)).isNull();
            assertThat(map.find(Long.MIN_VALUE)).isNull();

            final long addr = BufferUtil.address(foreign);
            assertThat(addr).isNotZero();
            assertThat(map.find(addr)).isNull();
            assertThat(map.find(addr + foreign.capacity() - 1)).isNull();

            map.remove(chunk);
            assertThat(map.size()).isZero();
            assertThat(map.chunks()).isEmpty();
            assertThat(map.find(base)).isNull();
            assertThat(map.find(base + size - 1)).isNull();
        } finally {
            chunk.release();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 20})
    void addAndRemoveSeveralChunks(final int n) {
        final List<Chunk> chunks = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                chunks.add(Chunk.allocate(SMALL));
            }
            final ChunkMap map = new ChunkMap(SMALL);
            for (int i = 0; i < n; i++) {
                map.add(chunks.get(i));
                assertThat(map.size()).isEqualTo(i + 1);
                // everything added so far is found, nothing else
                for (int j = 0; j < n; j++) {
                    final Chunk c = chunks.get(j);
                    final Chunk expected = j <= i ? c : null;
                    assertThat(map.find(c.base)).as("chunk %d base after adding %d", j, i).isSameAs(expected);
                    assertThat(map.find(c.base + c.size - 1)).as("chunk %d end after adding %d", j, i)
                        .isSameAs(expected);
                }
            }
            assertThat(map.chunks()).containsExactlyInAnyOrderElementsOf(chunks);

            // remove every other chunk
            for (int i = 0; i < n; i += 2) {
                map.remove(chunks.get(i));
            }
            assertThat(map.size()).isEqualTo(n / 2);
            for (int j = 0; j < n; j++) {
                final Chunk c = chunks.get(j);
                final Chunk expected = j % 2 == 1 ? c : null;
                for (final long a : new long[] {c.base, c.base + PAGE, c.base + c.size - 1}) {
                    final Chunk found = map.find(a);
                    // a removed chunk's address may lie inside no other chunk (chunks don't overlap)
                    assertThat(found).as("chunk %d address %x", j, a).isSameAs(expected);
                }
                assertThat(map.find(c.base - 1)).as("below chunk %d", j).isNotSameAs(c);
                assertThat(map.find(c.base + c.size)).as("above chunk %d", j).isNotSameAs(c);
            }

            // remove the rest
            for (int i = 1; i < n; i += 2) {
                map.remove(chunks.get(i));
            }
            assertThat(map.size()).isZero();
            for (final Chunk c : chunks) {
                assertThat(map.find(c.base)).isNull();
                assertThat(map.find(c.base + c.size - 1)).isNull();
            }
        } finally {
            releaseAll(chunks);
        }
    }

    @Test
    void everyPageOfAChunkAcrossItsWindowsIsFound() {
        // a map for 4 MiB chunks uses 4 MiB windows; a chunk's two windows both resolve
        final Chunk chunk = Chunk.allocate(4 << 20);
        try {
            final ChunkMap map = new ChunkMap(4 << 20);
            map.add(chunk);
            for (long off = 0; off < chunk.size; off += PAGE) {
                assertThat(map.find(chunk.base + off)).as("offset %d", off).isSameAs(chunk);
            }
            assertThat(map.find(chunk.base + chunk.size - 1)).isSameAs(chunk);
            assertThat(map.find(chunk.base + chunk.size)).isNull();
            assertThat(map.find(chunk.base - 1)).isNull();
        } finally {
            chunk.release();
        }
    }

    @Test
    void aWindowSharedByTwoChunksResolvesEachAddressToItsOwn() {
        final int bytes = 3 << 20; // not a power of two: 2 MiB windows, some holding the end of one chunk and the start of the next
        final long x = 0x7f12_3450_0000L;
        final Chunk a = Chunk.describing(x, bytes);
        final Chunk b = Chunk.describing(a.base + a.size, bytes); // right after a
        final Chunk c = Chunk.describing(b.base + b.size + PAGE, bytes); // one page of gap
        final ChunkMap map = new ChunkMap(bytes);
        map.add(b);
        map.add(a);
        map.add(c);
        for (final Chunk k : List.of(a, b, c)) {
            for (long off = 0; off < k.size; off += PAGE / 4) {
                assertThat(map.find(k.base + off)).as("offset %d", off).isSameAs(k);
            }
            assertThat(map.find(k.base + k.size - 1)).isSameAs(k);
        }
        assertThat(map.find(a.base - 1)).isNull();
        assertThat(map.find(b.base + b.size)).as("the gap").isNull();
        assertThat(map.find(c.base - 1)).as("the gap's end").isNull();
        assertThat(map.find(c.base + c.size)).isNull();
        map.remove(a);
        assertThat(map.find(a.base + a.size - 1)).as("a removed, its window shared with b").isNull();
        assertThat(map.find(b.base)).isSameAs(b);
    }

    @Test
    void manyChunksAgreeWithALinearSearch() {
        final int bytes = 1 << 20;
        final java.util.SplittableRandom r = new java.util.SplittableRandom(42);
        final List<Chunk> chunks = new ArrayList<>();
        long at = 0x7f00_0000_0000L;
        for (int i = 0; i < 600; i++) {
            at += (long) r.nextInt(4) * PAGE + r.nextInt(2) * 4096L; // adjacent, or gaps of pages (and 4 KiB misalignment)
            final Chunk c = Chunk.describing(at, bytes);
            chunks.add(c);
            at = c.base + c.size;
        }
        final ChunkMap map = new ChunkMap(bytes);
        for (final Chunk c : chunks) {
            map.add(c);
        }
        assertThat(map.size()).isEqualTo(chunks.size());
        final long low = chunks.get(0).base - 4 * PAGE;
        final long span = at + 4 * PAGE - low;
        for (int n = 0; n < 200_000; n++) {
            final long address = low + r.nextLong(span);
            assertThat(map.find(address)).as("address %x", address).isSameAs(linear(chunks, address));
        }
        for (int i = 0; i < chunks.size(); i += 2) {
            map.remove(chunks.get(i));
        }
        final List<Chunk> left = new ArrayList<>();
        for (int i = 1; i < chunks.size(); i += 2) {
            left.add(chunks.get(i));
        }
        for (int n = 0; n < 100_000; n++) {
            final long address = low + r.nextLong(span);
            assertThat(map.find(address)).as("address %x after removals", address).isSameAs(linear(left, address));
        }
    }

    @Test
    void chunksScatteredOverTheAddressSpaceAgreeWithALinearSearch() {
        final int bytes = 1 << 20;
        final java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        final java.util.TreeMap<Long, Chunk> byBase = new java.util.TreeMap<>();
        while (byBase.size() < 300) { // far apart: most in leaves of their own
            final long raw = (r.nextLong(1L << 40, 1L << 46) & -4096L) + (r.nextBoolean() ? 0 : 100);
            final Chunk c = Chunk.describing(raw, bytes);
            final java.util.Map.Entry<Long, Chunk> below = byBase.floorEntry(c.base);
            final java.util.Map.Entry<Long, Chunk> above = byBase.ceilingEntry(c.base);
            if ((below == null || below.getValue().base + below.getValue().size <= c.base)
                && (above == null || c.base + c.size <= above.getKey())) {
                byBase.put(c.base, c);
            }
        }
        final List<Chunk> chunks = new ArrayList<>(byBase.values());
        java.util.Collections.shuffle(chunks, new java.util.Random(7));
        final ChunkMap map = new ChunkMap(bytes);
        chunks.forEach(map::add);
        assertThat(map.chunks()).containsExactlyInAnyOrderElementsOf(chunks);
        for (int n = 0; n < 100_000; n++) {
            final Chunk near = chunks.get(r.nextInt(chunks.size()));
            final long address = near.base - bytes + r.nextLong(3L * bytes);
            assertThat(map.find(address)).as("address %x", address).isSameAs(linear(chunks, address));
        }
        final List<Chunk> left = new ArrayList<>(chunks);
        for (final Chunk c : chunks) {
            map.remove(c);
            left.remove(c);
            assertThat(map.find(c.base)).isNull();
            if (!left.isEmpty()) {
                final Chunk still = left.get(r.nextInt(left.size()));
                assertThat(map.find(still.base + r.nextLong(still.size))).isSameAs(still);
            }
        }
        assertThat(map.size()).isZero();
    }

    @Test
    void removeAllTakesSeveralAtOnceAndIgnoresStrangers() {
        final int bytes = 1 << 20;
        final List<Chunk> chunks = new ArrayList<>();
        long at = 0x7f40_0000_0000L;
        for (int i = 0; i < 8; i++) {
            final Chunk c = Chunk.describing(at, bytes);
            chunks.add(c);
            at = c.base + c.size + (i % 2) * PAGE;
        }
        final ChunkMap map = new ChunkMap(bytes);
        chunks.forEach(map::add);
        final Chunk stranger = Chunk.describing(at + (1L << 30), bytes);
        map.removeAll(List.of(chunks.get(1), chunks.get(2), chunks.get(5), stranger));
        assertThat(map.size()).isEqualTo(5);
        for (int i = 0; i < chunks.size(); i++) {
            final Chunk c = chunks.get(i);
            final Chunk expected = i == 1 || i == 2 || i == 5 ? null : c;
            assertThat(map.find(c.base)).as("chunk %d", i).isSameAs(expected);
            assertThat(map.find(c.base + c.size - 1)).as("chunk %d end", i).isSameAs(expected);
        }
        map.removeAll(List.of(stranger));
        assertThat(map.size()).isEqualTo(5);
    }

    @Test
    void aChunkOfAnotherSizeIsRefusedAndChangesNothing() {
        final int bytes = 3 << 20;
        final Chunk a = Chunk.describing(0x7f00_0000_0000L, bytes);
        final Chunk b = Chunk.describing(a.base + a.size, bytes);
        final ChunkMap map = new ChunkMap(bytes);
        map.add(a);
        map.add(b);
        final Chunk small = Chunk.describing(a.base + a.size - 2 * PAGE, 1 << 16); // a third one in a shared window
        org.assertj.core.api.Assertions.assertThatIllegalStateException().isThrownBy(() -> map.add(small))
            .withMessageContaining("three chunks");
        assertThat(map.size()).isEqualTo(2);
        assertThat(map.find(a.base + a.size - 1)).isSameAs(a);
        assertThat(map.find(b.base)).isSameAs(b);
    }

    private static Chunk linear(final List<Chunk> chunks, final long address) {
        for (final Chunk c : chunks) {
            if (c.contains(address)) {
                return c;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- page runs

    @Test
    void takePagesPacksAlignedRunsInASmallChunk() {
        final Chunk chunk = Chunk.allocate(SMALL);
        try {
            assertThat(chunk.takePages(1)).isEqualTo(0);
            assertThat(chunk.takePages(2)).isEqualTo(2);   // aligned to 2: pages 2-3, not 1-2
            assertThat(chunk.takePages(1)).isEqualTo(1);
            assertThat(chunk.usedPages()).isEqualTo(4);
            assertThat(chunk.takePages(1)).isEqualTo(-1);
            assertThat(chunk.takePages(4)).isEqualTo(-1);
            assertThat(chunk.usedPages()).isEqualTo(4);

            chunk.returnPages(2, 2);
            assertThat(chunk.usedPages()).isEqualTo(2);
            assertThat(chunk.takePages(4)).isEqualTo(-1);
            assertThat(chunk.takePages(2)).isEqualTo(2);
            chunk.returnPages(2, 2);
            chunk.returnPages(0, 1);
            chunk.returnPages(1, 1);
            assertThat(chunk.usedPages()).isZero();
            assertThat(chunk.takePages(4)).isEqualTo(0);
            // runs larger than the chunk never fit
            chunk.returnPages(0, 4);
            assertThat(chunk.takePages(8)).isEqualTo(-1);
            assertThat(chunk.takePages(64)).isEqualTo(-1);
            assertThat(chunk.usedPages()).isZero();
        } finally {
            chunk.release();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 8, 16, 32, 64})
    void runsAreAlignedToTheirSizeUntilExhausted(final int n) {
        final Chunk chunk = Chunk.allocate(8 << 20);     // 128 pages, two bitmap words
        try {
            assertThat(chunk.pages).isEqualTo(128);
            final List<Integer> firsts = new ArrayList<>();
            for (int i = 0; i < 128 / n; i++) {
                final int first = chunk.takePages(n);
                assertThat(first).as("run %d of %d pages", i, n).isNotNegative();
                assertThat(first % n).as("run at page %d of %d pages", first, n).isZero();
                firsts.add(first);
            }
            assertThat(firsts).doesNotHaveDuplicates();
            assertThat(chunk.usedPages()).isEqualTo(128);
            assertThat(chunk.takePages(n)).isEqualTo(-1);
            assertThat(chunk.takePages(1)).isEqualTo(-1);
            assertThat(chunk.seal()).isFalse();

            for (final int first : firsts) {
                chunk.returnPages(first, n);
            }
            assertThat(chunk.usedPages()).isZero();
            assertThat(chunk.takePages(64)).isEqualTo(0);
            assertThat(chunk.takePages(64)).isEqualTo(64);
            chunk.returnPages(0, 64);
            chunk.returnPages(64, 64);
        } finally {
            chunk.release();
        }
    }

    @Test
    void pagesPastTheEndOfAPartialBitmapWordAreNeverFree() {
        final Chunk chunk = Chunk.allocate(100 * PAGE);    // word 1 holds pages 64..99
        try {
            assertThat(chunk.takePages(64)).isEqualTo(0);
            assertThat(chunk.takePages(64)).isEqualTo(-1);
            assertThat(chunk.takePages(32)).isEqualTo(64);
            assertThat(chunk.takePages(32)).isEqualTo(-1); // 96..127 would run past page 99
            assertThat(chunk.takePages(4)).isEqualTo(96);
            assertThat(chunk.takePages(1)).isEqualTo(-1);
            assertThat(chunk.usedPages()).isEqualTo(100);
            chunk.returnPages(0, 64);
            chunk.returnPages(64, 32);
            chunk.returnPages(96, 4);
            assertThat(chunk.usedPages()).isZero();
            assertThat(chunk.seal()).isTrue();
        } finally {
            chunk.release();
        }
    }

    @Test
    void sealSucceedsOnlyWhenAllPagesAreFree() {
        final Chunk chunk = Chunk.allocate(SMALL);
        try {
            final int p = chunk.takePages(1);
            assertThat(chunk.seal()).isFalse();
            // a failed seal changes nothing
            assertThat(chunk.takePages(1)).isEqualTo(1);
            chunk.returnPages(1, 1);
            chunk.returnPages(p, 1);
            assertThat(chunk.seal()).isTrue();
            assertThat(chunk.takePages(1)).isEqualTo(-1);
            assertThat(chunk.takePages(2)).isEqualTo(-1);
            assertThat(chunk.takePages(4)).isEqualTo(-1);
            assertThat(chunk.seal()).isFalse();            // already sealed: not all pages free
            assertThat(chunk.usedPages()).isZero();
        } finally {
            chunk.release();
        }
    }

    @Test
    void failedSealRollsBackEarlierWords() {
        final Chunk chunk = Chunk.allocate(8 << 20);     // 128 pages
        try {
            assertThat(chunk.takePages(64)).isEqualTo(0);
            assertThat(chunk.takePages(1)).isEqualTo(64);  // word 1 in use
            chunk.returnPages(0, 64);                      // word 0 free again
            assertThat(chunk.seal()).isFalse();            // seals word 0, fails on word 1, rolls back
            assertThat(chunk.takePages(64)).isEqualTo(0);  // word 0 is usable again
            assertThat(chunk.takePages(2)).isEqualTo(66);
            chunk.returnPages(0, 64);
            chunk.returnPages(64, 1);
            chunk.returnPages(66, 2);
            assertThat(chunk.seal()).isTrue();
            assertThat(chunk.takePages(1)).isEqualTo(-1);
            assertThat(chunk.takePages(64)).isEqualTo(-1);
        } finally {
            chunk.release();
        }
    }
}
