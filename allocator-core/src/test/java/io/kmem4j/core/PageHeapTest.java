package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link PageHeap} on heaps of their own (256 KiB chunks: four 64 KiB pages). The caches
 * that describe the slabs come from a real allocator: 64 B (1-page slabs), 16 KiB (2-page slabs) and
 * 32 KiB (4-page slabs). The allocator's own heap is not used.
 */
class PageHeapTest {
    private static final int CHUNK = 256 << 10;
    private static final long RESERVED = CHUNK + 4096; // a chunk plus its alignment pad

    private SlabAllocator a;
    private SlabCache one;
    private SlabCache two;
    private SlabCache four;
    private final List<PageHeap> heaps = new ArrayList<>();

    @BeforeEach
    void setUp() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().maxSizeClassBytes(32 << 10).chunkSizeBytes(CHUNK)
            .reapIntervalMillis(60_000).build());
        final SlabCache[] caches = TestSupport.caches(a);
        one = caches[a.classes.indexOf(64)];
        two = caches[a.classes.indexOf(16 << 10)];
        four = caches[a.classes.indexOf(32 << 10)];
        assertThat(one.slabPages).isEqualTo(1);
        assertThat(two.slabPages).isEqualTo(2);
        assertThat(four.slabPages).isEqualTo(4);
    }

    @AfterEach
    void tearDown() {
        for (final PageHeap h : heaps) {
            for (final Chunk c : h.snapshot()) {
                for (int p = 0; p < c.pages; p++) {
                    final Slab s = c.slabs[p];
                    if (s != null && s.headPage == p) {
                        h.freeSlab(s);
                    }
                }
            }
            h.releaseEmptyChunks(0);
        }
        a.close();
    }

    private PageHeap heap(final int retainedEmptyChunks) {
        final PageHeap h = new PageHeap(CHUNK, retainedEmptyChunks);
        heaps.add(h);
        return h;
    }

    private static Slab carve(final PageHeap h, final SlabCache cache) {
        final Slab s = h.tryNewSlab(cache);
        assertThat(s).as("a free run of %d pages", cache.slabPages).isNotNull();
        return s;
    }

    // ---- growing ------------------------------------------------------------------------------------

    /**
     * Growth never waits inside the JDK (a try-reservation), so a grower queued behind a slow holder
     * (descheduled: 20,000 runnable virtual threads on 2 carriers in VirtualThreadsIT) waits for it and
     * then grows, instead of giving up after a time-out and sending its request to the JDK.
     */
    @Test
    void aGrowerQueuedBehindASlowHolderWaitsAndGrowsInsteadOfGivingUp() throws Exception {
        final PageHeap h = heap(1);
        final java.util.concurrent.locks.ReentrantLock serializer = h.growSerializer;
        final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        final Thread holder = new Thread(() -> {
            serializer.lock();
            try {
                held.countDown();
                Thread.sleep(1500); // longer than the one-second give-up the grower used to have
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                serializer.unlock();
            }
        });
        holder.start();
        held.await();
        h.grow(h.snapshot()); // threw "a chunk reservation is already waiting" after one second before
        holder.join();
        assertThat(h.chunkCount()).as("the queued grower added its chunk").isEqualTo(1);
    }

    @Test
    void anEmptyHeapHasNoChunkAndNoSlab() {
        final PageHeap h = heap(1);
        assertThat(h.chunkCount()).isZero();
        assertThat(h.reservedBytes()).isZero();
        assertThat(h.snapshot()).isEmpty();
        assertThat(h.tryNewSlab(one)).as("no chunk: the caller must grow").isNull();
        assertThat(h.chunksAllocated()).isZero();
    }

    @Test
    void growAddsExactlyOneChunk() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        assertThat(h.chunkCount()).isEqualTo(1);
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
        assertThat(h.chunksAllocated()).isEqualTo(1);
        assertThat(h.reserveAttempts()).isEqualTo(1);
        final Chunk c = h.snapshot()[0];
        assertThat(c.pages).isEqualTo(4);
        assertThat(c.size).isEqualTo(CHUNK);
        assertThat(c.reservedBytes).isEqualTo(RESERVED);
        assertThat(c.usedPages()).isZero();
        assertThat(h.map.find(c.base)).isSameAs(c);
        assertThat(h.map.find(c.base + CHUNK - 1)).isSameAs(c);

        h.grow(h.snapshot());
        assertThat(h.chunkCount()).isEqualTo(2);
        assertThat(h.reservedBytes()).isEqualTo(2 * RESERVED);
        assertThat(h.snapshot()[0]).as("existing chunks stay first").isSameAs(c);
        assertThat(h.chunksAllocated()).isEqualTo(2);
    }

    @Test
    void growIsANoOpWhenTheSnapshotChanged() {
        final PageHeap h = heap(1);
        final Chunk[] stale = h.snapshot();
        h.grow(stale);
        final Chunk[] afterFirst = h.snapshot();
        assertThat(afterFirst).isNotSameAs(stale).hasSize(1);

        h.grow(stale); // a second thread that missed with the same snapshot
        assertThat(h.chunkCount()).as("a burst of misses adds one chunk").isEqualTo(1);
        assertThat(h.snapshot()).isSameAs(afterFirst);
        assertThat(h.reserveAttempts()).as("no reservation attempted").isEqualTo(1);
        assertThat(h.chunksAllocated()).isEqualTo(1);
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
    }

    @Test
    void growIsANoOpWhenAChunkWasReleasedSinceTheSnapshot() {
        final PageHeap h = heap(0);
        h.grow(h.snapshot());
        final Chunk[] seen = h.snapshot();
        assertThat(h.releaseEmptyChunks(0)).isEqualTo(RESERVED);
        h.grow(seen);
        assertThat(h.chunkCount()).isZero();
        assertThat(h.reserveAttempts()).isEqualTo(1);
    }

    // ---- carving slabs ------------------------------------------------------------------------------

    @Test
    void tryNewSlabInstallsTheSlabInItsChunk() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        final Chunk c = h.snapshot()[0];
        final Slab s = carve(h, two);
        assertThat(s.chunk).isSameAs(c);
        assertThat(s.headPage).isZero();
        assertThat(s.pages).isEqualTo(2);
        assertThat(s.base).isEqualTo(c.base);
        assertThat(s.cache).isSameAs(two);
        assertThat(c.slabs[0]).isSameAs(s);
        assertThat(c.slabs[1]).isSameAs(s);
        assertThat(c.slabs[2]).isNull();
        assertThat(c.head[0]).isZero();
        assertThat(c.head[1]).isZero();
        assertThat(c.counters[0]).isEqualTo(Counters.pack(two.id, two.objectsPerSlab, 0, false));
        assertThat(c.counters[1]).as("the counters word lives at the head page only").isZero();
        assertThat(c.usedPages()).isEqualTo(2);
        assertThat(s.freeObjects()).isEqualTo(two.objectsPerSlab);
    }

    @Test
    void slabsAreAlignedToTheirPageCount() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        final Chunk c = h.snapshot()[0];
        final Slab a1 = carve(h, one);
        assertThat(a1.headPage).isZero();
        final Slab b2 = carve(h, two);
        assertThat(b2.headPage).as("a 2-page slab skips page 1 to start on an even page").isEqualTo(2);
        assertThat(b2.base).isEqualTo(c.base + 2 * 65536L);
        assertThat(c.head[2]).isEqualTo(2);
        assertThat(c.head[3]).isEqualTo(2);
        assertThat(c.slabs[3]).isSameAs(b2);
        final Slab c1 = carve(h, one);
        assertThat(c1.headPage).as("a 1-page slab fills the hole").isEqualTo(1);
        assertThat(c.usedPages()).isEqualTo(4);
        assertThat(h.tryNewSlab(one)).as("chunk full: the caller must grow").isNull();
        assertThat(h.chunkCount()).as("tryNewSlab never grows").isEqualTo(1);

        h.grow(h.snapshot());
        final Chunk second = h.snapshot()[1];
        final Slab d4 = carve(h, four);
        assertThat(d4.chunk).isSameAs(second);
        assertThat(d4.headPage).isZero();
        for (int p = 0; p < 4; p++) {
            assertThat(second.head[p]).isZero();
            assertThat(second.slabs[p]).isSameAs(d4);
        }
    }

    @Test
    void aFourPageSlabNeedsAWhollyFreeAlignedRun() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        final Slab s = carve(h, one); // page 0 taken: no aligned run of 4 pages is left
        assertThat(h.tryNewSlab(four)).isNull();
        final Slab t = carve(h, two);
        assertThat(t.headPage).isEqualTo(2);
        h.freeSlab(s);
        assertThat(h.tryNewSlab(four)).as("pages 2-3 still taken").isNull();
        h.freeSlab(t);
        assertThat(carve(h, four).headPage).isZero();
    }

    @Test
    void tryNewSlabUsesTheFirstChunkWithARun() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        final Slab s = carve(h, two);
        final Slab t = carve(h, two);
        assertThat(s.chunk).isSameAs(cs[0]);
        assertThat(t.chunk).isSameAs(cs[0]);
        assertThat(carve(h, one).chunk).as("first chunk full").isSameAs(cs[1]);
        h.freeSlab(s);
        assertThat(carve(h, one).chunk).as("a freed run of the first chunk is used first").isSameAs(cs[0]);
    }

    // ---- freeing slabs ------------------------------------------------------------------------------

    @Test
    void freeSlabReturnsItsPagesAndClearsItsEntries() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        final Chunk c = h.snapshot()[0];
        final Slab keep = carve(h, one);
        final Slab s = carve(h, two);
        assertThat(c.usedPages()).isEqualTo(3);
        h.freeSlab(s);
        assertThat(c.usedPages()).isEqualTo(1);
        assertThat(c.slabs[2]).isNull();
        assertThat(c.slabs[3]).isNull();
        assertThat(c.counters[2]).isZero();
        assertThat(c.slabs[0]).isSameAs(keep);
        assertThat(h.chunkCount()).isEqualTo(1);
        final Slab again = carve(h, two);
        assertThat(again.chunk).isSameAs(c);
        assertThat(again.headPage).as("the freed run is carved again").isEqualTo(2);
        assertThat(again).isNotSameAs(s);
    }

    /**
     * A chunk left empty is kept until it stayed empty for the decay (the reaper's interval): the
     * chunks a collection's burst of frees empties are usually needed again at once, and releasing
     * and growing them again cost the GC-only workload 754 chunk grows in 5 s.
     */
    @Test
    void freeSlabKeepsTheEmptiedChunkUntilItDecays() {
        final PageHeap h = heap(0);
        h.grow(h.snapshot());
        final Chunk c = h.snapshot()[0];
        final Slab s = carve(h, one);
        final Slab t = carve(h, one);
        h.freeSlab(s);
        h.freeSlab(t);
        assertThat(h.chunkCount()).as("empty, not yet decayed").isEqualTo(1);
        assertThat(h.releaseDecayedChunks(0, 3_600_000_000_000L, 0)).as("released before an hour of emptiness").isZero();
        assertThat(h.chunkCount()).isEqualTo(1);
        assertThat(h.releaseDecayedChunks(0, 0, 0)).isEqualTo(RESERVED);
        assertThat(h.chunkCount()).isZero();
        assertThat(h.reservedBytes()).isZero();
        assertThat(h.chunksReleased()).isEqualTo(1);
        assertThat(h.map.find(c.base)).isNull();
        assertThat(h.tryNewSlab(one)).isNull();
    }

    @Test
    void freeSlabKeepsOneEmptyChunkWhenOneIsRetained() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        final Chunk c = h.snapshot()[0];
        h.freeSlab(carve(h, two));
        assertThat(h.releaseDecayedChunks(1, 0, 0)).as("the retained one stays, decayed or not").isZero();
        assertThat(h.chunkCount()).isEqualTo(1);
        assertThat(h.chunksReleased()).isZero();
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
        assertThat(c.usedPages()).isZero();
        assertThat(h.map.find(c.base)).isSameAs(c);
        assertThat(carve(h, four).chunk).as("the retained chunk is usable").isSameAs(c);
    }

    @Test
    void decayReleasesEmptyChunksBeyondTheRetainedOneKeepingTheFirst() {
        final PageHeap h = heap(1);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        final Slab s0 = carve(h, four);
        final Slab s1 = carve(h, four);
        assertThat(s0.chunk).isSameAs(cs[0]);
        assertThat(s1.chunk).isSameAs(cs[1]);
        h.freeSlab(s1);
        h.freeSlab(s0);
        assertThat(h.chunkCount()).as("both kept until they decay").isEqualTo(2);
        h.releaseDecayedChunks(1, 0, 0);
        assertThat(h.snapshot()).as("two empty chunks, one retained").containsExactly(cs[0]);
        assertThat(h.chunksReleased()).isEqualTo(1);
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
        assertThat(h.map.find(cs[1].base)).isNull();
    }

    @Test
    void decayReleasesOnlyChunksThatStayedEmptyLongEnough() {
        final PageHeap h = heap(0);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        final Slab inUse = carve(h, four);
        final Slab early = carve(h, four);
        final Slab late = carve(h, four);
        assertThat(List.of(inUse.chunk, early.chunk, late.chunk)).containsExactly(cs[0], cs[1], cs[2]);
        h.freeSlab(early);
        h.freeSlab(late);
        cs[1].emptySinceNanos -= 10_000_000_000L; // empty for 10 s
        h.releaseDecayedChunks(0, 5_000_000_000L, 0);
        assertThat(h.snapshot()).as("the one empty for 10 s goes, the fresh one and the used one stay")
            .containsExactly(cs[0], cs[2]);
        assertThat(inUse.chunk.usedPages()).isEqualTo(4);
    }

    @Test
    void aDecayedChunkKeptForRetentionIsTheFreshestEmptyOne() {
        final PageHeap h = heap(1);
        final Chunk[] cs = twoEmptiedChunks(h);
        cs[0].emptySinceNanos -= 10_000_000_000L;
        h.releaseDecayedChunks(1, 5_000_000_000L, 0);
        assertThat(h.snapshot()).as("retention keeps the fresh empty chunk; the decayed one goes").containsExactly(cs[1]);
    }

    /**
     * A heap that grew within the hold keeps its decayed empty chunks (GC gives them back in bursts the
     * next allocations need again; releasing and growing maps fresh memory, a page fault per 4 KiB);
     * once the hold has passed since the last growth, decay releases them as before.
     */
    @Test
    void decayReleasesNothingWhileTheHeapGrewWithinTheHold() throws InterruptedException {
        final PageHeap h = heap(0);
        final Chunk[] cs = twoEmptiedChunks(h);
        cs[0].emptySinceNanos -= 10_000_000_000L;
        cs[1].emptySinceNanos -= 10_000_000_000L;
        assertThat(h.releaseDecayedChunks(0, 5_000_000_000L, 3_600_000_000_000L))
            .as("grown a moment ago, hold of an hour: both decayed chunks stay").isZero();
        assertThat(h.snapshot()).containsExactly(cs[0], cs[1]);
        Thread.sleep(20);
        assertThat(h.releaseDecayedChunks(0, 5_000_000_000L, 10_000_000L))
            .as("the hold (10 ms) passed since the last growth: decay releases both").isEqualTo(2 * RESERVED);
        assertThat(h.chunkCount()).isZero();
        assertThat(h.chunksReleased()).isEqualTo(2);
    }

    /** Grows {@code h} by two chunks, carves two slabs of four pages (both land in the first) and frees them: two empty chunks. */
    private Chunk[] twoEmptiedChunks(final PageHeap h) {
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        h.freeSlab(carve(h, four));
        h.freeSlab(carve(h, four));
        return cs;
    }

    // ---- releaseEmptyChunks -------------------------------------------------------------------------

    @Test
    void releaseEmptyChunksKeepsTheFirstKeepEmptyChunks() {
        final PageHeap h = heap(5);
        for (int i = 0; i < 3; i++) {
            h.grow(h.snapshot());
        }
        final Chunk[] cs = h.snapshot();
        assertThat(h.reservedBytes()).isEqualTo(3 * RESERVED);
        assertThat(h.releaseEmptyChunks(1)).isEqualTo(2 * RESERVED);
        assertThat(h.snapshot()).containsExactly(cs[0]);
        assertThat(h.chunksReleased()).isEqualTo(2);
        assertThat(h.map.find(cs[1].base)).isNull();
        assertThat(h.map.find(cs[2].base)).isNull();
        assertThat(carve(h, four).chunk).as("the kept chunk is not sealed").isSameAs(cs[0]);
    }

    @Test
    void releaseEmptyChunksNeverReleasesAChunkInUse() {
        final PageHeap h = heap(5);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        final Slab s = carve(h, four); // in cs[0]
        final Slab t = carve(h, four); // in cs[1]
        assertThat(t.chunk).isSameAs(cs[1]);
        assertThat(h.releaseEmptyChunks(0)).isEqualTo(RESERVED);
        assertThat(h.snapshot()).containsExactly(cs[0], cs[1]);
        assertThat(h.releaseEmptyChunks(0)).as("nothing left to release").isZero();
        assertThat(s.chunk.usedPages()).isEqualTo(4);
        assertThat(h.chunkCount()).isEqualTo(2);
        assertThat(h.reservedBytes()).isEqualTo(2 * RESERVED);
    }

    @Test
    void releaseEmptyChunksCountsOnlyEmptyChunksAgainstKeep() {
        final PageHeap h = heap(5);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        final Chunk[] cs = h.snapshot();
        carve(h, four); // cs[0] in use
        assertThat(h.releaseEmptyChunks(1)).as("the one empty chunk is within keep").isZero();
        assertThat(h.snapshot()).containsExactly(cs[0], cs[1]);
    }

    @Test
    void releaseEmptyChunksOnAnEmptyHeapReleasesNothing() {
        final PageHeap h = heap(0);
        assertThat(h.releaseEmptyChunks(0)).isZero();
        assertThat(h.chunkCount()).isZero();
        assertThat(h.chunksReleased()).isZero();
    }

    @Test
    void reservedBytesAndChunkCountFollowGrowAndRelease() {
        final PageHeap h = heap(0);
        h.grow(h.snapshot());
        h.grow(h.snapshot());
        assertThat(h.chunkCount()).isEqualTo(2);
        assertThat(h.reservedBytes()).isEqualTo(2 * RESERVED);
        final Slab s = carve(h, one);
        assertThat(h.releaseEmptyChunks(0)).isEqualTo(RESERVED);
        assertThat(h.chunkCount()).isEqualTo(1);
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
        h.freeSlab(s);
        assertThat(h.chunkCount()).as("the emptied chunk waits for its decay").isEqualTo(1);
        h.releaseEmptyChunks(0);
        assertThat(h.chunkCount()).isZero();
        assertThat(h.reservedBytes()).isZero();
        assertThat(h.chunksAllocated()).isEqualTo(2);
        assertThat(h.chunksReleased()).isEqualTo(2);
        h.grow(h.snapshot());
        assertThat(h.chunkCount()).isEqualTo(1);
        assertThat(h.reservedBytes()).isEqualTo(RESERVED);
        assertThat(h.chunksAllocated()).isEqualTo(3);
    }
}
