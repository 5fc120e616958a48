package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Unit tests of {@link SlabCache}, the cache of a real allocator with one size class (64 B objects,
 * 1024 per 1-page slab, four slabs per 256 KiB chunk), 8-round magazines, a depot of 2 full magazines
 * and no retained empty chunk. Thread caches {@code tcA} and {@code tcB} are registered with the
 * allocator (so frees can be delivered to their inboxes) but belong to no thread. Every
 * {@code *Locked} call is made with the cache lock held.
 */
class SlabCacheTest {
    private static final int ROUNDS = 8;
    private static final int DEPOT = 2;

    private SlabAllocator a;
    private SlabCache c;
    private ThreadCache tcA;
    private ThreadCache tcB;

    @BeforeEach
    void setUp() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().maxSizeClassBytes(64).chunkSizeBytes(256 << 10)
            .magazineRounds(ROUNDS).depotMagazines(DEPOT).retainedEmptyChunks(0).reapIntervalMillis(60_000).build());
        assertThat(a.classes.count()).isEqualTo(1);
        c = a.cache(0);
        assertThat(c.objectSize).isEqualTo(64);
        assertThat(c.objectsPerSlab).isEqualTo(1024);
        assertThat(c.slabPages).isEqualTo(1);
        tcA = a.registry.register(null, ThreadCache.CACHING);
        tcB = a.registry.register(null, ThreadCache.CACHING);
        assertThat(tcA.id).isNotEqualTo(tcB.id);
    }

    @AfterEach
    void tearDown() {
        // give every slab still frozen by a test thread cache back, then close (trim frees what is empty)
        run(() -> {
            for (final Chunk chunk : a.pages.snapshot()) {
                for (int p = 0; p < chunk.pages; p++) {
                    final Slab s = chunk.slabs[p];
                    if (s != null && s.headPage == p && s.frozen()) {
                        c.unfreezeLocked(s);
                    }
                }
            }
        });
        a.close();
    }

    private void run(final Runnable r) {
        c.lock.lock();
        try {
            r.run();
        } finally {
            c.lock.unlock();
        }
    }

    private <T> T get(final Supplier<T> s) {
        c.lock.lock();
        try {
            return s.get();
        } finally {
            c.lock.unlock();
        }
    }

    private void grow() {
        a.pages.grow(a.pages.snapshot()); // never under the cache lock
    }

    private Slab freeze(final ThreadCache tc) {
        final Slab s = get(() -> c.freezeSlabLocked(tc));
        assertThat(s).as("a slab to freeze").isNotNull();
        return s;
    }

    private static long[] take(final Slab s, final int n) {
        final Magazine m = new Magazine(n);
        assertThat(s.fill(m, n)).isEqualTo(n);
        final long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = m.rounds[--m.count];
        }
        return out;
    }

    private void giveBack(final Slab s, final long[] objects, final ThreadCache me) {
        run(() -> {
            for (final long o : objects) {
                c.returnObjectLocked(s, o, me);
            }
        });
    }

    private static List<Long> chain(final long head) {
        final List<Long> out = new ArrayList<>();
        for (long o = head; o != 0; o = RemoteInbox.next(o)) {
            out.add(o);
        }
        return out;
    }

    // ---- depot --------------------------------------------------------------------------------------

    @Test
    void depotObjectsCountTheRoundsOfFullMagazinesAndShrinkFlushesThem() {
        grow();
        final Slab s = freeze(tcA);
        final Magazine m1 = new Magazine(ROUNDS);
        final Magazine m2 = new Magazine(ROUNDS);
        s.fill(m1, 8);
        s.fill(m2, 3);
        run(() -> {
            c.unfreezeLocked(s);
            assertThat(c.depot.exchangeForEmpty(m1)).isNotNull();
            assertThat(c.depot.exchangeForEmpty(m2)).isNotNull();
            assertThat(c.depot.objects()).isEqualTo(11);
            assertThat(c.heldObjectsLocked()).isEqualTo(11);
            c.shrinkLocked(tcA);
            assertThat(c.depot.objects()).isZero();
            assertThat(c.depot.pollFull()).isNull();
        });
        assertThat(m1.count).isZero();
        assertThat(m2.count).isZero();
        assertThat(s.inuse()).isZero();
        assertThat(c.slabs).as("the emptied slab stayed in the cache as an empty slab, which shrink freed").isZero();
        assertThat(c.slabsFreed).isEqualTo(1);
        assertThat(a.pages.chunkCount()).as("the emptied chunk waits for its decay").isEqualTo(1);
        a.pages.releaseEmptyChunks(0);
        assertThat(a.pages.chunkCount()).isZero();
    }

    // ---- freezing -----------------------------------------------------------------------------------

    @Test
    void freezeReturnsNullWhenTheHeapMustGrowThenANewFrozenSlab() {
        assertThat(get(() -> c.freezeSlabLocked(tcA))).as("no chunk yet").isNull();
        assertThat(c.slabs).isZero();
        assertThat(c.slabsCreated).isZero();
        grow();
        final Slab s = freeze(tcA);
        assertThat(s.cache).isSameAs(c);
        assertThat(s.frozen()).isTrue();
        assertThat(s.chunk.ownerAcquire(s.headPage)).isEqualTo(tcA.id);
        assertThat(s.onPartial).isFalse();
        assertThat(s.inuse()).isZero();
        assertThat(Counters.cacheId(s.counters())).isEqualTo(c.id);
        assertThat(c.slabs).isEqualTo(1);
        assertThat(c.slabsCreated).isEqualTo(1);
    }

    @Test
    void freezePrefersTheLowestAddressPartialSlab() {
        grow();
        final Slab s0 = freeze(tcA);
        final Slab s1 = freeze(tcA);
        final Slab s2 = freeze(tcA);
        assertThat(s0.base).isLessThan(s1.base);
        assertThat(s1.base).isLessThan(s2.base);
        final long[] o0 = take(s0, 1);
        final long[] o1 = take(s1, 1);
        final long[] o2 = take(s2, 1);
        run(() -> {
            c.unfreezeLocked(s2);
            c.unfreezeLocked(s0);
            c.unfreezeLocked(s1);
            assertThat(c.partialSlabsLocked()).isEqualTo(3);
        });
        for (final Slab s : new Slab[] {s0, s1, s2}) {
            assertThat(s.onPartial).isTrue();
            assertThat(s.frozen()).isFalse();
            assertThat(s.chunk.ownerAcquire(s.headPage)).isZero();
        }
        assertThat(freeze(tcB)).isSameAs(s0);
        assertThat(s0.onPartial).isFalse();
        assertThat(s0.frozen()).isTrue();
        assertThat(s0.chunk.ownerAcquire(s0.headPage)).isEqualTo(tcB.id);
        assertThat(get(c::partialSlabsLocked)).isEqualTo(2);
        assertThat(freeze(tcB)).isSameAs(s1);
        assertThat(freeze(tcB)).isSameAs(s2);
        assertThat(c.slabsCreated).isEqualTo(3);

        final Slab s3 = freeze(tcB);
        assertThat(s3).as("no partial slab, no empty one: a new slab").isNotIn(s0, s1, s2);
        assertThat(s3.headPage).isEqualTo(3);
        assertThat(c.slabsCreated).isEqualTo(4);
        assertThat(get(() -> c.freezeSlabLocked(tcB))).as("chunk full: the heap must grow").isNull();
        assertThat(c.slabs).isEqualTo(4);

        giveBack(s0, o0, tcB);
        giveBack(s1, o1, tcB);
        giveBack(s2, o2, tcB);
    }

    @Test
    void freezeTakesAPartialSlabBeforeAnEmptyOneAndAnEmptyOneBeforeANewSlab() {
        grow();
        final Slab low = freeze(tcA);
        final Slab high = freeze(tcA);
        final long[] o = take(high, 2);
        run(() -> {
            c.unfreezeLocked(low); // unused: kept as an empty slab
            c.unfreezeLocked(high); // partly used: partial list
        });
        assertThat(low.onPartial).isFalse();
        assertThat(c.slabs).as("the empty slab is kept").isEqualTo(2);
        assertThat(c.slabsFreed).isZero();
        assertThat(low.chunk.slabs[low.headPage]).isSameAs(low);

        assertThat(freeze(tcA)).as("partial first, although the empty one has the lower address").isSameAs(high);
        assertThat(freeze(tcA)).as("then the empty one").isSameAs(low);
        assertThat(low.frozen()).isTrue();
        assertThat(c.slabsCreated).isEqualTo(2);
        final Slab fresh = freeze(tcA);
        assertThat(fresh).isNotIn(low, high);
        assertThat(c.slabsCreated).isEqualTo(3);

        giveBack(high, o, tcA);
    }

    // ---- unfreezing ---------------------------------------------------------------------------------

    @Test
    void unfreezePutsAPartlyUsedSlabOnThePartialList() {
        grow();
        final Slab s = freeze(tcA);
        final long[] o = take(s, 5);
        run(() -> c.unfreezeLocked(s));
        assertThat(s.frozen()).isFalse();
        assertThat(s.chunk.ownerAcquire(s.headPage)).isZero();
        assertThat(s.onPartial).isTrue();
        assertThat(s.inuse()).isEqualTo(5);
        assertThat(get(c::partialSlabsLocked)).isEqualTo(1);
        assertThat(c.slabs).isEqualTo(1);
        giveBack(s, o, tcA);
        assertThat(get(c::partialSlabsLocked)).as("emptied: off the partial list").isZero();
        assertThat(s.onPartial).isFalse();
    }

    @Test
    void unfreezeOfUnusedSlabsKeepsThemEmptyInTheCacheUntilTheyAreGivenBack() {
        grow();
        final Slab s0 = freeze(tcA);
        final Slab s1 = freeze(tcA);
        final Slab s2 = freeze(tcA);
        final Chunk chunk = s0.chunk;
        assertThat(chunk.usedPages()).isEqualTo(3);

        run(() -> {
            c.unfreezeLocked(s1);
            c.unfreezeLocked(s0);
            c.unfreezeLocked(s2);
        });
        assertThat(c.slabs).as("empty slabs stay in their cache (a GC burst empties them; the next allocations need them)")
            .isEqualTo(3);
        assertThat(c.slabsFreed).isZero();
        assertThat(get(c::emptySlabsLocked)).isEqualTo(3);
        assertThat(get(c::partialSlabsLocked)).isZero();
        assertThat(chunk.slabs[s1.headPage]).as("an empty slab stays installed").isSameAs(s1);
        assertThat(s0.frozen()).isFalse();
        assertThat(chunk.usedPages()).isEqualTo(3);

        assertThat(get(() -> c.releaseEmptySlabsLocked(1))).as("all but the lowest-address one go back").isEqualTo(2);
        assertThat(c.slabs).isEqualTo(1);
        assertThat(c.slabsFreed).isEqualTo(2);
        assertThat(chunk.slabs[s1.headPage]).as("freed: pages back to the heap").isNull();
        assertThat(chunk.counters[s1.headPage]).isZero();
        assertThat(chunk.usedPages()).isEqualTo(1);
        assertThat(a.pages.chunkCount()).as("the kept empty slab keeps the chunk").isEqualTo(1);

        assertThat(freeze(tcB)).as("the kept one is reused, not carved anew").isSameAs(s0);
        assertThat(c.slabsCreated).isEqualTo(3);
    }

    @Test
    void unfreezeOfAFullSlabPutsItOnNoList() {
        grow();
        final Slab s = freeze(tcA);
        final long[] all = take(s, 1024);
        run(() -> c.unfreezeLocked(s));
        assertThat(s.frozen()).isFalse();
        assertThat(s.onPartial).isFalse();
        assertThat(get(c::partialSlabsLocked)).isZero();
        assertThat(c.slabs).isEqualTo(1);
        assertThat(s.chunk.slabs[s.headPage]).isSameAs(s);
        final Slab next = freeze(tcA);
        assertThat(next).as("a full slab is never frozen again").isNotSameAs(s);
        giveBack(s, all, tcA);
    }

    // ---- returning objects --------------------------------------------------------------------------

    @Test
    void returnObjectOfASlabFrozenByAnotherThreadCacheIsSentToIt() {
        grow();
        final Slab s = freeze(tcA);
        final long[] o = take(s, 4);
        final long freeWord = s.free[0];
        run(() -> c.returnObjectLocked(s, o[0], tcB));
        assertThat(s.inuse()).as("not returned to the bitmap").isEqualTo(4);
        assertThat(s.free[0]).isEqualTo(freeWord);
        assertThat(c.doubleFrees).isZero();
        assertThat(tcB.pendingOutgoing()).isEqualTo(1);
        final List<Long> pending = new ArrayList<>();
        tcB.forEachPending(pending::add);
        assertThat(pending).containsExactly(o[0]);
        assertThat(tcB.stats[ThreadCache.REMOTE_SENT]).isEqualTo(1);
        assertThat(tcA.inbox.nonEmpty()).as("batched, not yet delivered").isFalse();

        tcB.flushOutgoing();
        assertThat(tcB.pendingOutgoing()).isZero();
        assertThat(chain(tcA.inbox.takeAll())).containsExactly(o[0]);

        run(() -> c.returnObjectLocked(s, o[0], tcA)); // the owner takes it back
        assertThat(s.inuse()).isEqualTo(3);
        assertThat(s.free[0] & 1L).isEqualTo(1L);
        giveBack(s, new long[] {o[1], o[2], o[3]}, tcA);
    }

    @Test
    void returnObjectToMyOwnFrozenSlabKeepsItFrozenAndOffTheLists() {
        grow();
        final Slab s = freeze(tcA);
        final long[] all = take(s, 1024); // full
        run(() -> c.returnObjectLocked(s, all[0], tcA));
        assertThat(s.inuse()).isEqualTo(1023);
        assertThat(s.onPartial).as("frozen: never on the partial list").isFalse();
        assertThat(get(c::partialSlabsLocked)).isZero();
        final long[] rest = new long[1023];
        System.arraycopy(all, 1, rest, 0, 1023);
        giveBack(s, rest, tcA);
        assertThat(s.inuse()).isZero();
        assertThat(s.frozen()).isTrue();
        assertThat(s.chunk.ownerAcquire(s.headPage)).isEqualTo(tcA.id);
        assertThat(c.slabs).as("an empty frozen slab is not freed").isEqualTo(1);
        assertThat(s.chunk.slabs[s.headPage]).isSameAs(s);
        assertThat(freeze(tcB)).as("nor kept as an empty slab").isNotSameAs(s);
        assertThat(tcA.pendingOutgoing()).isZero();
    }

    @Test
    void returnObjectOfAnUnfrozenSlabGoesToItsBitmapAndMovesTheSlabBetweenLists() {
        grow();
        final Slab s = freeze(tcA);
        final long[] all = take(s, 1024);
        run(() -> c.unfreezeLocked(s));
        assertThat(s.onPartial).isFalse();

        run(() -> c.returnObjectLocked(s, all[5], tcB));
        assertThat(s.inuse()).isEqualTo(1023);
        assertThat(s.free[0]).isEqualTo(1L << 5);
        assertThat(s.onPartial).as("no longer full: partial").isTrue();
        assertThat(get(c::partialSlabsLocked)).isEqualTo(1);
        assertThat(tcB.pendingOutgoing()).as("nothing sent: no owner").isZero();

        run(() -> c.returnObjectLocked(s, all[5], tcB));
        assertThat(c.doubleFrees).isEqualTo(1);
        assertThat(s.inuse()).isEqualTo(1023);
        assertThat(get(c::partialSlabsLocked)).isEqualTo(1);

        final long[] rest = new long[1023];
        for (int i = 0, j = 0; i < 1024; i++) {
            if (i != 5) {
                rest[j++] = all[i];
            }
        }
        giveBack(s, rest, tcB);
        assertThat(s.inuse()).isZero();
        assertThat(s.onPartial).as("emptied: off the partial list").isFalse();
        assertThat(get(c::partialSlabsLocked)).isZero();
        assertThat(c.slabs).as("kept as an empty slab").isEqualTo(1);
        assertThat(c.slabsFreed).isZero();
        assertThat(freeze(tcB)).isSameAs(s);
        assertThat(c.doubleFrees).isEqualTo(1);
    }

    @Test
    void returnObjectThatEmptiesASlabKeepsItEmptyAndAddressOrderedForReuse() {
        grow();
        final Slab low = freeze(tcA);
        final Slab s = freeze(tcA);
        final long[] o = take(s, 2);
        run(() -> {
            c.unfreezeLocked(low);
            c.unfreezeLocked(s);
        });
        assertThat(get(c::partialSlabsLocked)).as("partly used").isEqualTo(1);
        giveBack(s, o, tcB);
        assertThat(c.slabsFreed).isZero();
        assertThat(c.slabs).isEqualTo(2);
        assertThat(get(c::partialSlabsLocked)).isZero();
        assertThat(get(c::emptySlabsLocked)).isEqualTo(2);
        assertThat(s.chunk.slabs[s.headPage]).isSameAs(s);
        assertThat(freeze(tcB)).as("lowest address first").isSameAs(low);
        assertThat(freeze(tcB)).isSameAs(s);
        assertThat(c.slabsCreated).isEqualTo(2);
    }

    // ---- flush --------------------------------------------------------------------------------------

    @Test
    void flushEmptiesAMagazineIntoBitmapsOrToTheOwnersOfFrozenSlabs() {
        grow();
        final Slab frozenByA = freeze(tcA);
        final Slab unfrozen = freeze(tcA);
        final Magazine m = new Magazine(ROUNDS);
        frozenByA.fill(m, 2);
        unfrozen.fill(m, 3);
        final long[] toA = {m.rounds[0], m.rounds[1]};
        run(() -> c.unfreezeLocked(unfrozen));
        assertThat(unfrozen.onPartial).isTrue();

        run(() -> c.flushLocked(m, tcB));
        assertThat(m.count).isZero();
        assertThat(m.isEmpty()).isTrue();
        assertThat(unfrozen.inuse()).isZero();
        assertThat(get(c::partialSlabsLocked)).as("emptied into the empty list").isZero();
        assertThat(frozenByA.inuse()).as("sent to tcA, not put back").isEqualTo(2);
        assertThat(tcB.pendingOutgoing()).isEqualTo(2);
        final List<Long> pending = new ArrayList<>();
        tcB.forEachPending(pending::add);
        assertThat(pending).containsExactlyInAnyOrder(toA[0], toA[1]);

        tcB.flushOutgoing();
        final List<Long> inbox = chain(tcA.inbox.takeAll());
        assertThat(inbox).containsExactlyInAnyOrder(toA[0], toA[1]);
        final Magazine back = new Magazine(ROUNDS);
        for (final long o : inbox) {
            back.rounds[back.count++] = o;
        }
        run(() -> c.flushLocked(back, tcA));
        assertThat(back.count).isZero();
        assertThat(frozenByA.inuse()).isZero();
        assertThat(frozenByA.frozen()).isTrue();

        run(() -> c.flushLocked(back, tcA)); // an empty magazine: nothing happens
        assertThat(c.doubleFrees).isZero();
    }

    // ---- shared magazine (threads without a private cache) -------------------------------------------

    @Test
    void takeOneReturnsZeroWhenTheHeapMustGrowThenAscendingObjects() {
        assertThat(get(c::takeOneLocked)).isZero();
        grow();
        final long first = get(c::takeOneLocked);
        final long second = get(c::takeOneLocked);
        final Slab s = a.pages.slabOf(first, new Chunk[1]);
        assertThat(first).isEqualTo(s.base);
        assertThat(second).isEqualTo(s.base + 64);
        assertThat(s.inuse()).as("one magazine's worth taken from the slab").isEqualTo(ROUNDS);
        assertThat(s.frozen()).isFalse();
        assertThat(get(c::heldObjectsLocked)).isEqualTo(ROUNDS - 2);
        assertThat(get(c::partialSlabsLocked)).isEqualTo(1);
        giveBack(s, new long[] {first, second}, tcA);
    }

    // ---- retirement ---------------------------------------------------------------------------------

    @Test
    void retireIfEmptyOnlyWithoutSlabsAndThenNoSlabIsCreated() {
        grow();
        final Slab s = freeze(tcA);
        assertThat(c.retireIfEmpty()).as("a frozen slab").isFalse();
        assertThat(c.retired).isFalse();
        assertThat(CacheTable.get(c.id)).isSameAs(c);
        run(() -> c.unfreezeLocked(s));
        assertThat(c.retireIfEmpty()).as("an empty slab is a slab").isFalse();
        run(() -> c.shrinkLocked(tcA));
        assertThat(c.slabs).isZero();

        final int used = CacheTable.used();
        assertThat(c.retireIfEmpty()).isTrue();
        assertThat(c.retired).isTrue();
        assertThat(CacheTable.get(c.id)).as("id given back").isNull();
        assertThat(CacheTable.used()).isEqualTo(used - 1);
        assertThat(c.retireIfEmpty()).as("only once").isFalse();
        assertThat(CacheTable.used()).isEqualTo(used - 1);

        grow(); // pages are free, yet no slab may be created
        assertThatThrownBy(() -> run(() -> c.freezeSlabLocked(tcA)))
            .isInstanceOf(SlabCache.RetiredException.class).hasMessage("kmem4j-64 is closed");
        assertThatThrownBy(() -> run(c::takeOneLocked)).isInstanceOf(SlabCache.RetiredException.class);
        assertThat(c.slabsCreated).isEqualTo(1);
        assertThat(a.pages.snapshot()[0].usedPages()).isZero();
    }

    @Test
    void aFlushThatFailsHalfWayNeverHandsAnAddressOutTwice() throws Exception {
        // flushLocked pops each round before returning it to its slab: a throw part-way (a heap
        // OutOfMemoryError in the partial list's TreeMap entry, injected here) leaks at most one block and
        // never leaves a round both in the magazine and free in its slab
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().magazineRounds(4).depotMagazines(0)
            .reapIntervalMillis(60_000).build());
        try {
            final int size = 16 << 10; // 8 objects per slab
            final SlabCache cache = a.cache(a.classes.indexOf(size));
            final List<ByteBuffer> l = new ArrayList<>();
            for (int i = 0; i < 13; i++) {
                l.add(a.allocateExplicit(size)); // one per refill from the shared slabs: l[0..7] fill S1, l[8..12] S2
            }
            for (int i = 0; i <= 7; i++) {
                a.free(l.get(i)); // both magazines full: previous holds l[0..3], loaded l[4..7] (all S1's)
            }
            final Field partialField = SlabCache.class.getDeclaredField("partial");
            partialField.setAccessible(true);
            final FailingOnceTreeSet failing = new FailingOnceTreeSet();
            @SuppressWarnings("unchecked")
            final java.util.TreeSet<Slab> original = (java.util.TreeSet<Slab>) partialField.get(cache);
            failing.addAll(original);
            failing.armed = true;
            partialField.set(cache, failing);
            a.free(l.get(8)); // freeSlow -> flushLocked(previous): l[3] makes S1 partial -> partial.add throws
            assertThat(a.stats().hookFailures()).as("precondition: the injected failure hit the flush").isEqualTo(1);

            final List<ByteBuffer> live = new ArrayList<>(l.subList(9, 13));
            for (int i = 0; i < 12; i++) {
                live.add(a.allocateExplicit(size));
            }
            final java.util.Set<Long> seen = new java.util.HashSet<>();
            final List<Long> duplicates = new ArrayList<>();
            for (final ByteBuffer b : live) {
                if (a.owns(b) && !seen.add(TestSupport.address(b))) {
                    duplicates.add(TestSupport.address(b));
                }
            }
            assertThat(duplicates).as("addresses handed out to two live buffers at once").isEmpty();
        } finally {
            try {
                a.close();
            } catch (final Throwable ignored) {
                // the allocator is corrupt by now
            }
        }
    }

    /** Stands in for a heap OutOfMemoryError inside TreeMap.put (its new Entry), once. */
    private static final class FailingOnceTreeSet extends java.util.TreeSet<Slab> {
        private static final long serialVersionUID = 1L;
        boolean armed;

        @Override
        public boolean add(final Slab s) {
            if (armed) {
                armed = false;
                throw new OutOfMemoryError("injected: Java heap space (TreeMap.Entry)");
            }
            return super.add(s);
        }
    }
}
