package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import org.agrona.UnsafeApi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Unit tests of {@link ThreadCache}: statistics counting by kind and the batching of remote frees
 * ({@link RemoteBatches#BATCH} deep, {@link RemoteBatches#SLOTS} slots chosen by
 * {@code owner & 3}). Owners are thread caches registered with a real allocator (ids 4, 5, 6, ... after
 * the allocator's own three), belonging to no thread; the "objects" are 64-byte cells of a private
 * off-heap block (a remote free only writes the first 8 bytes of an object, its link).
 */
class ThreadCacheTest {
    private static final int CELLS = 256;

    private SlabAllocator a;
    private long block;

    @BeforeEach
    void setUp() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().maxSizeClassBytes(192).magazineRounds(16)
            .reapIntervalMillis(60_000).build());
        block = UnsafeApi.allocateMemory((long) CELLS * 64);
        UnsafeApi.setMemory(block, (long) CELLS * 64, (byte) 0x5A); // garbage links
    }

    @AfterEach
    void tearDown() {
        a.remote.orphans.takeAll(); // fake objects must never reach the slabs
        a.close();
        UnsafeApi.freeMemory(block);
    }

    private ThreadCache owner() {
        return a.registry.register(null, ThreadCache.CACHING);
    }

    private ThreadCache sender(final int kind) {
        return new ThreadCache(1000, null, kind, TestSupport.caches(a), a.remote); // a sender needs no registration
    }

    private long cell(final int i) {
        return block + i * 64L;
    }

    private static List<Long> chain(final long head) {
        final List<Long> out = new ArrayList<>();
        for (long o = head; o != 0; o = RemoteInbox.next(o)) {
            out.add(o);
            if (out.size() > CELLS) {
                throw new AssertionError("chain does not end: " + out.subList(0, 8) + "...");
            }
        }
        return out;
    }

    private static List<Long> pending(final ThreadCache tc) {
        final List<Long> out = new ArrayList<>();
        tc.forEachPending(out::add);
        return out;
    }

    // ---- construction and statistics ----------------------------------------------------------------

    @Test
    void onlyACachingThreadCacheHasMagazines() {
        final int classes = a.classes.count();
        assertThat(classes).isEqualTo(3);
        final ThreadCache caching = sender(ThreadCache.CACHING);
        assertThat(caching.loaded).hasSize(classes).containsOnly(Magazine.NONE);
        assertThat(caching.previous).hasSize(classes).containsOnly(Magazine.NONE);
        assertThat(Magazine.NONE.isEmpty()).as("the allocate hit path misses on NONE").isTrue();
        assertThat(Magazine.NONE.isFull()).as("the free hit path spills on NONE").isTrue();
        caching.magazines(2); // the first slow path of class 2
        assertThat(caching.loaded[2]).isNotSameAs(Magazine.NONE).isNotSameAs(caching.previous[2]);
        assertThat(caching.previous[2]).isNotSameAs(Magazine.NONE);
        assertThat(caching.loaded[2].rounds).hasSize(16);
        assertThat(caching.previous[2].rounds).hasSize(16);
        assertThat(caching.loaded[0]).as("classes not used stay without magazines").isSameAs(Magazine.NONE);
        final Magazine made = caching.loaded[2];
        caching.magazines(2);
        assertThat(caching.loaded[2]).as("made once").isSameAs(made);
        assertThat(caching.current).hasSize(classes).containsOnlyNulls();
        assertThat(caching.stats).hasSize(ThreadCache.SCALARS + classes * ThreadCache.CLASS_STRIDE);
        for (final int kind : new int[] {ThreadCache.SHARED, ThreadCache.DEFERRING}) {
            final ThreadCache tc = sender(kind);
            assertThat(tc.loaded).hasSize(classes).containsOnlyNulls();
            assertThat(tc.previous).containsOnlyNulls();
        }
    }

    /**
     * A virtual thread's path on its carrier's cache never throws: when the heap has no room for a
     * class's first magazines, keepWithoutWaiting says no and changes nothing (the caller defers the
     * free, or puts a drained chain back on the orphans). The heap's refusal is made real with a
     * magazine size no array can have.
     */
    @Test
    void withoutRoomForItsFirstMagazinesACarrierKeepsNothingAndThrowsNothing() throws Exception {
        final ThreadCache caching = sender(ThreadCache.CACHING);
        final java.lang.reflect.Field rounds = SlabCache.class.getDeclaredField("magazineRounds");
        rounds.setAccessible(true);
        final SlabCache c = caching.cache(1);
        final int before = c.magazineRounds;
        rounds.setInt(c, Integer.MAX_VALUE); // new long[MAX_VALUE]: OutOfMemoryError, as an exhausted heap
        try {
            assertThatThrownBy(() -> caching.magazines(1)).isInstanceOf(OutOfMemoryError.class);
            assertThat(caching.magazinesWithoutThrowing(1)).isFalse();
            assertThat(caching.keepWithoutWaiting(1, 4096)).as("kept nowhere, said so").isFalse();
            assertThat(caching.loaded[1]).isSameAs(Magazine.NONE);
            assertThat(caching.previous[1]).isSameAs(Magazine.NONE);
            assertThat(Magazine.NONE.count).as("nothing pushed onto the shared place-holder").isZero();
        } finally {
            rounds.setInt(c, before);
        }
        assertThat(caching.keepWithoutWaiting(1, 4096)).as("room again: kept").isTrue();
        assertThat(caching.loaded[1].count).isEqualTo(1);
    }

    @Test
    void classBaseGivesEachClassItsOwnStatisticsLine() {
        assertThat(ThreadCache.classBase(0)).isEqualTo(8);
        assertThat(ThreadCache.classBase(1)).isEqualTo(16);
        assertThat(ThreadCache.classBase(2) + ThreadCache.ASCENDING).isEqualTo(27);
    }

    @Test
    void countAddsToACachingThreadCachesStatistics() {
        final ThreadCache tc = sender(ThreadCache.CACHING);
        tc.count(ThreadCache.ALLOC_BYTES, 100);
        tc.count(ThreadCache.ALLOC_BYTES, 28);
        tc.count(ThreadCache.classBase(1) + ThreadCache.FREES, 3);
        tc.count(ThreadCache.FREE_BYTES, -5);
        assertThat(tc.stats[ThreadCache.ALLOC_BYTES]).isEqualTo(128);
        assertThat(tc.stats[ThreadCache.classBase(1) + ThreadCache.FREES]).isEqualTo(3);
        assertThat(tc.stats[ThreadCache.FREE_BYTES]).isEqualTo(-5);
        assertThat(tc.stats[ThreadCache.classBase(0) + ThreadCache.FREES]).isZero();
    }

    @Test
    void countOnTheSharedThreadCacheLosesNoUpdateUnderContention() throws Exception {
        final ThreadCache shared = sender(ThreadCache.SHARED);
        final int threads = 4;
        final int perThread = 200_000;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (final Exception e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < perThread; i++) {
                    shared.count(ThreadCache.REMOTE_SENT, 1);
                    shared.count(ThreadCache.classBase(2) + ThreadCache.ALLOCS, 2);
                }
            });
            ts.add(th);
            th.start();
        }
        for (final Thread th : ts) {
            th.join();
        }
        assertThat(shared.stats[ThreadCache.REMOTE_SENT]).isEqualTo((long) threads * perThread);
        assertThat(shared.stats[ThreadCache.classBase(2) + ThreadCache.ALLOCS]).isEqualTo(2L * threads * perThread);
    }

    // ---- remote frees: batching ---------------------------------------------------------------------

    @Test
    void sendRemoteBatchesPerOwnerAndDeliversAt32() {
        final ThreadCache owner = owner();
        final ThreadCache me = sender(ThreadCache.CACHING);
        for (int i = 0; i < RemoteBatches.BATCH - 1; i++) {
            me.freeRemote(owner.id, cell(i));
        }
        assertThat(me.pendingOutgoing()).isEqualTo(31);
        assertThat(owner.inbox.nonEmpty()).as("31 frees wait in the batch").isFalse();
        assertThat(me.stats[ThreadCache.REMOTE_SENT]).isEqualTo(31);
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isZero();

        me.freeRemote(owner.id, cell(31));
        assertThat(me.pendingOutgoing()).isZero();
        assertThat(me.stats[ThreadCache.REMOTE_SENT]).isEqualTo(32);
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isEqualTo(1);
        final List<Long> expected = new ArrayList<>();
        for (int i = 31; i >= 0; i--) {
            expected.add(cell(i)); // linked in front: the last sent comes first
        }
        assertThat(chain(owner.inbox.takeAll())).containsExactlyElementsOf(expected);

        me.freeRemote(owner.id, cell(32));
        assertThat(me.pendingOutgoing()).as("a new batch starts").isEqualTo(1);
        assertThat(pending(me)).containsExactly(cell(32));
    }

    @Test
    void successiveBatchesToOneOwnerChainInItsInbox() {
        final ThreadCache owner = owner();
        final ThreadCache me = sender(ThreadCache.CACHING);
        for (int i = 0; i < 64; i++) {
            me.freeRemote(owner.id, cell(i));
        }
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isEqualTo(2);
        final List<Long> got = chain(owner.inbox.takeAll());
        assertThat(got).hasSize(64);
        assertThat(got.get(0)).isEqualTo(cell(63));
        assertThat(got.get(31)).as("the end of the second batch links to the first").isEqualTo(cell(32));
        assertThat(got.get(32)).isEqualTo(cell(31));
        assertThat(got.get(63)).isEqualTo(cell(0));
    }

    @Test
    void fourOwnersInDifferentSlotsBatchSideBySide() {
        final ThreadCache[] owners = new ThreadCache[4];
        for (int i = 0; i < 4; i++) {
            owners[i] = owner();
        }
        final boolean[] slotUsed = new boolean[RemoteBatches.SLOTS];
        for (final ThreadCache o : owners) {
            slotUsed[o.id & (RemoteBatches.SLOTS - 1)] = true;
        }
        assertThat(slotUsed).as("four consecutive ids fill the four slots").containsOnly(true);

        final ThreadCache me = sender(ThreadCache.CACHING);
        int n = 0;
        for (int round = 0; round < 31; round++) {
            for (final ThreadCache o : owners) {
                me.freeRemote(o.id, cell(n++));
            }
        }
        assertThat(me.pendingOutgoing()).isEqualTo(124);
        for (final ThreadCache o : owners) {
            assertThat(o.inbox.nonEmpty()).isFalse();
        }
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isZero();

        me.freeRemote(owners[2].id, cell(n++)); // 32nd for owners[2] only
        assertThat(me.pendingOutgoing()).isEqualTo(93);
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isEqualTo(1);
        final List<Long> got = chain(owners[2].inbox.takeAll());
        assertThat(got).hasSize(32);
        for (int k = 0; k < 32; k++) {
            assertThat(got.get(k)).isEqualTo(k == 0 ? cell(124) : cell(2 + 4 * (31 - k)));
        }
        assertThat(owners[0].inbox.nonEmpty()).isFalse();
        assertThat(owners[1].inbox.nonEmpty()).isFalse();
        assertThat(owners[3].inbox.nonEmpty()).isFalse();
    }

    @Test
    void aDifferentOwnerInTheSameSlotFlushesThePreviousBatch() {
        final ThreadCache first = owner();
        ThreadCache same = null;
        for (int i = 0; i < RemoteBatches.SLOTS; i++) {
            same = owner(); // after four more registrations, the last id shares first's slot
        }
        assertThat(same.id).isEqualTo(first.id + RemoteBatches.SLOTS);
        final ThreadCache me = sender(ThreadCache.CACHING);
        me.freeRemote(first.id, cell(0));
        me.freeRemote(first.id, cell(1));
        me.freeRemote(first.id, cell(2));
        assertThat(first.inbox.nonEmpty()).isFalse();

        me.freeRemote(same.id, cell(3));
        assertThat(chain(first.inbox.takeAll())).containsExactly(cell(2), cell(1), cell(0));
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isEqualTo(1);
        assertThat(me.pendingOutgoing()).isEqualTo(1);
        assertThat(pending(me)).containsExactly(cell(3));
        assertThat(same.inbox.nonEmpty()).as("the new owner's batch waits").isFalse();

        me.flushOutgoing();
        assertThat(chain(same.inbox.takeAll())).containsExactly(cell(3));
        assertThat(first.inbox.nonEmpty()).isFalse();
    }

    @Test
    void flushOutgoingDeliversEveryPendingBatchToItsOwner() {
        final ThreadCache o1 = owner();
        final ThreadCache o2 = owner();
        final ThreadCache o3 = owner();
        final ThreadCache me = sender(ThreadCache.CACHING);
        me.freeRemote(o1.id, cell(0));
        me.freeRemote(o2.id, cell(1));
        me.freeRemote(o1.id, cell(2));
        me.freeRemote(o2.id, cell(3));
        me.freeRemote(o1.id, cell(4));
        assertThat(me.pendingOutgoing()).isEqualTo(5);
        assertThat(pending(me)).containsExactlyInAnyOrder(cell(0), cell(1), cell(2), cell(3), cell(4));

        me.flushOutgoing();
        assertThat(me.pendingOutgoing()).isZero();
        assertThat(pending(me)).isEmpty();
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).as("one batch per owner").isEqualTo(2);
        assertThat(me.stats[ThreadCache.REMOTE_SENT]).isEqualTo(5);
        assertThat(chain(o1.inbox.takeAll())).containsExactly(cell(4), cell(2), cell(0));
        assertThat(chain(o2.inbox.takeAll())).containsExactly(cell(3), cell(1));
        assertThat(o3.inbox.nonEmpty()).isFalse();

        me.flushOutgoing(); // nothing pending: no batch
        assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).isEqualTo(2);
        assertThat(o1.inbox.nonEmpty()).isFalse();
    }

    @Test
    void flushOutgoingAppendsToFreesAlreadyInTheInbox() {
        final ThreadCache owner = owner();
        final ThreadCache other = sender(ThreadCache.CACHING);
        final ThreadCache me = sender(ThreadCache.CACHING);
        other.freeRemote(owner.id, cell(10));
        other.flushOutgoing();
        me.freeRemote(owner.id, cell(20));
        me.freeRemote(owner.id, cell(21));
        me.flushOutgoing();
        assertThat(chain(owner.inbox.takeAll())).containsExactly(cell(21), cell(20), cell(10));
    }

    @Test
    void forEachPendingVisitsEachSlotMostRecentFirst() {
        final ThreadCache o1 = owner();
        final ThreadCache o2 = owner();
        final ThreadCache me = sender(ThreadCache.CACHING);
        assertThat(pending(me)).isEmpty();
        assertThat(me.pendingOutgoing()).isZero();
        me.freeRemote(o2.id, cell(0));
        me.freeRemote(o1.id, cell(1));
        me.freeRemote(o2.id, cell(2));
        me.freeRemote(o1.id, cell(3));
        final int s1 = o1.id & (RemoteBatches.SLOTS - 1);
        final int s2 = o2.id & (RemoteBatches.SLOTS - 1);
        final List<Long> expected = s1 < s2 ? List.of(cell(3), cell(1), cell(2), cell(0))
            : List.of(cell(2), cell(0), cell(3), cell(1));
        assertThat(pending(me)).containsExactlyElementsOf(expected);
        assertThat(me.pendingOutgoing()).isEqualTo(4);
        // quiescent reads change nothing
        assertThat(pending(me)).containsExactlyElementsOf(expected);
        assertThat(o1.inbox.nonEmpty()).isFalse();
        me.flushOutgoing();
    }

    // ---- remote frees: kinds that never batch -------------------------------------------------------

    @Test
    void nonCachingThreadCachesDeliverEachFreeAtOnce() {
        final ThreadCache owner = owner();
        for (final int kind : new int[] {ThreadCache.SHARED, ThreadCache.DEFERRING}) {
            final ThreadCache me = sender(kind);
            me.freeRemote(owner.id, cell(kind * 2));
            me.freeRemote(owner.id, cell(kind * 2 + 1));
            assertThat(me.pendingOutgoing()).isZero();
            assertThat(pending(me)).isEmpty();
            assertThat(me.stats[ThreadCache.REMOTE_SENT]).isEqualTo(2);
            assertThat(me.stats[ThreadCache.REMOTE_BATCHES]).as("one batch per free").isEqualTo(2);
            assertThat(chain(owner.inbox.takeAll())).containsExactly(cell(kind * 2 + 1), cell(kind * 2));
        }
    }

    /**
     * The GC cleaner thread's cache (DEFERRING) batches the frees of the thread it is bound to, as a
     * caching thread does; while a flush holds its revocation word each free goes out at once; after the
     * batching stopped for good it never batches again; another thread on it never batches.
     */
    @Test
    void theGcCleanerThreadsCacheBatchesItsFreesExceptWhileRevoked() throws InterruptedException {
        final ThreadCache owner = owner();
        final ThreadCache gc = sender(ThreadCache.DEFERRING);
        gc.bindBatchingThread(Thread.currentThread());
        final Thread other = new Thread(() -> gc.freeRemote(owner.id, cell(100)));
        gc.bindBatchingThread(other);
        assertThat(gc.batchingThread).as("the first thread bound keeps it").isSameAs(Thread.currentThread());
        for (int i = 0; i < RemoteBatches.BATCH - 1; i++) {
            gc.freeRemote(owner.id, cell(i));
        }
        assertThat(gc.pendingOutgoing()).isEqualTo(31);
        assertThat(owner.inbox.nonEmpty()).isFalse();

        other.start();
        other.join();
        assertThat(chain(owner.inbox.takeAll())).as("another thread on the cache: at once").containsExactly(cell(100));

        assertThat(gc.beginRevocation()).isTrue();
        gc.freeRemote(owner.id, cell(31));
        assertThat(chain(owner.inbox.takeAll())).as("during a flush: at once").containsExactly(cell(31));
        assertThat(gc.pendingOutgoing()).isEqualTo(31);
        gc.endRevocation(false);

        gc.freeRemote(owner.id, cell(32));
        assertThat(gc.pendingOutgoing()).isZero();
        assertThat(chain(owner.inbox.takeAll())).as("a full batch, one CAS").hasSize(32).startsWith(cell(32));
        assertThat(gc.stats[ThreadCache.REMOTE_SENT]).isEqualTo(34);
        assertThat(gc.stats[ThreadCache.REMOTE_BATCHES]).as("two single frees and one batch").isEqualTo(3);

        assertThat(gc.beginRevocation()).isTrue();
        gc.endRevocation(true); // the allocator closed: batching ended
        assertThat(gc.revocationEnded()).isTrue();
        gc.freeRemote(owner.id, cell(33));
        assertThat(chain(owner.inbox.takeAll())).containsExactly(cell(33));
        assertThat(gc.pendingOutgoing()).isZero();
    }

    @Test
    void aBatchForAnOwnerWithAClosedInboxGoesToTheOrphans() {
        final ThreadCache owner = owner();
        assertThat(owner.inbox.close()).isZero();
        final ThreadCache me = sender(ThreadCache.CACHING);
        me.freeRemote(owner.id, cell(0));
        me.freeRemote(owner.id, cell(1));
        me.flushOutgoing();
        assertThat(chain(a.remote.orphans.takeAll())).containsExactly(cell(1), cell(0));
    }

    @Test
    void aBatchForAnUnknownOwnerGoesToTheOrphans() {
        final ThreadCache me = sender(ThreadCache.CACHING);
        me.freeRemote(63, cell(5)); // no thread cache has id 63
        me.flushOutgoing();
        assertThat(chain(a.remote.orphans.takeAll())).containsExactly(cell(5));
    }

    @Test
    void aSpillThatCannotMakeAnEmptyMagazineLeavesTheDepotAndTheThreadApart() throws Exception {
        // spill takes the empty magazine before it gives the full one to the depot: when making the
        // empty one fails (heap exhausted), nothing has changed, so no magazine is both the thread's and
        // the depot's (two threads would then pop the same rounds)
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().magazineRounds(4).depotMagazines(4)
            .reapIntervalMillis(60_000).build());
        try {
            final int cls = a.classes.indexOf(4096);
            final List<ByteBuffer> live = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                live.add(a.allocateExplicit(4096));
            }
            final ThreadCache tc = a.registry.current();
            // free until both magazines are full: the next free goes to the depot
            while (!(tc.loaded[cls].isFull() && tc.previous[cls].isFull())) {
                a.free(live.remove(live.size() - 1));
            }
            final Field rounds = Depot.class.getDeclaredField("rounds"); // a new magazine's capacity
            rounds.setAccessible(true);
            rounds.setInt(a.cache(cls).depot, -1); // stands in for OutOfMemoryError in `new Magazine(rounds)`
            try {
                a.free(live.remove(live.size() - 1));
            } finally {
                rounds.setInt(a.cache(cls).depot, 4);
            }
            assertThat(a.stats().hookFailures()).as("precondition: the injected failure hit freeSlow").isEqualTo(1);
            final SlabCache cache = a.cache(cls);
            final List<Magazine> inDepot = new ArrayList<>();
            cache.lock.lock();
            try {
                for (Magazine m = cache.depot.pollFull(); m != null; m = cache.depot.pollFull()) {
                    inDepot.add(m);
                }
                for (int i = inDepot.size() - 1; i >= 0; i--) {
                    cache.depot.exchangeForEmpty(inDepot.get(i)); // put back in the same order
                }
            } finally {
                cache.lock.unlock();
            }
            final boolean shared = inDepot.stream().anyMatch(m -> m == tc.previous[cls]);

            // consequence: this thread drains "its" previous magazine, which the depot still lists as full
            for (int i = 0; i < 8; i++) {
                live.add(a.allocateExplicit(4096));
            }
            final AtomicReference<Throwable> thrown = new AtomicReference<>();
            final Thread other = new Thread(() -> {
                try {
                    a.free(a.allocateExplicit(4096));
                } catch (final Throwable t) {
                    thrown.set(t);
                }
            }, "other");
            other.start();
            other.join();
            assertThat(shared).as("tc.previous[cls] is also in the depot's full list after a failed freeSlow").isFalse();
            assertThat(thrown.get()).as("allocateExplicit on another thread must not throw").isNull();
        } finally {
            a.close();
        }
    }
}
