package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link Slab}: the free bitmap, {@link Slab#fill}, {@link Slab#putBack}, address
 * arithmetic, the debug check and the address order. Slabs are carved from a real allocator's page
 * heap (one 256 KiB chunk of four 1-page slabs); the caches are the allocator's own: 64 B (1024
 * objects, the bitmap exactly 16 words) and 192 B (341 objects, the last bitmap word partial).
 */
class SlabTest {
    private SlabAllocator a;
    private SlabCache c64;
    private SlabCache c192;
    private final List<Slab> carved = new ArrayList<>();

    @BeforeEach
    void setUp() {
        a = new SlabAllocator(SlabAllocatorConfig.builder().maxSizeClassBytes(192).chunkSizeBytes(256 << 10)
            .retainedEmptyChunks(0).reapIntervalMillis(60_000).build());
        final SlabCache[] caches = TestSupport.caches(a);
        assertThat(caches).hasSize(3);
        c64 = caches[0];
        c192 = caches[2];
        assertThat(c64.objectSize).isEqualTo(64);
        assertThat(c64.objectsPerSlab).isEqualTo(1024);
        assertThat(c192.objectSize).isEqualTo(192);
        assertThat(c192.objectsPerSlab).isEqualTo(341); // 65536 / 192 = 341.33
        a.pages.grow(a.pages.snapshot());
    }

    @AfterEach
    void tearDown() {
        for (final Slab s : carved) {
            a.pages.freeSlab(s);
        }
        a.close();
    }

    private Slab slab(final SlabCache cache) {
        final Slab s = a.pages.tryNewSlab(cache);
        assertThat(s).as("a free page for a slab of %s", cache.name).isNotNull();
        carved.add(s);
        return s;
    }

    private static long[] pops(final Magazine m) {
        final long[] out = new long[m.count];
        for (int i = 0; i < out.length; i++) {
            out[i] = m.rounds[--m.count];
        }
        return out;
    }

    // ---- a new slab ---------------------------------------------------------------------------------

    @Test
    void newSlabHasEveryObjectFreeAndACleanCountersWord() {
        final Slab s = slab(c192);
        assertThat(s.objects).isEqualTo(341);
        assertThat(s.objectSize).isEqualTo(192);
        assertThat(s.pages).isEqualTo(1);
        assertThat(s.base).isEqualTo(s.chunk.pageAddress(s.headPage));
        assertThat(s.free).hasSize(6);
        for (int w = 0; w < 5; w++) {
            assertThat(s.free[w]).as("word %d", w).isEqualTo(-1L);
        }
        assertThat(s.free[5]).as("341 - 320 = 21 objects in the last word").isEqualTo((1L << 21) - 1);
        assertThat(s.inuse()).isZero();
        assertThat(s.freeObjects()).isEqualTo(341);
        assertThat(s.frozen()).isFalse();
        assertThat(Counters.cacheId(s.counters())).isEqualTo(c192.id);
        assertThat(Counters.objects(s.counters())).isEqualTo(341);
        assertThat(s.counters()).isEqualTo(s.chunk.counters[s.headPage]);
        s.check(); // consistent

        final Slab t = slab(c64);
        assertThat(t.free).hasSize(16).containsOnly(-1L);
        assertThat(t.freeObjects()).isEqualTo(1024);
    }

    // ---- fill ---------------------------------------------------------------------------------------

    @Test
    void fillTakesTheLowestObjectsAndStoresThemSoPopsAscend() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(8);
        assertThat(s.fill(m, 5)).isEqualTo(5);
        assertThat(m.count).isEqualTo(5);
        final long b = s.base;
        assertThat(m.rounds).startsWith(b + 4 * 64, b + 3 * 64, b + 2 * 64, b + 64, b);
        assertThat(s.free[0]).as("bits 0..4 cleared").isEqualTo(-1L << 5);
        assertThat(s.inuse()).isEqualTo(5);
        assertThat(Counters.inuse(s.chunk.counters[s.headPage])).isEqualTo(5);
        assertThat(s.freeObjects()).isEqualTo(1019);
        assertThat(pops(m)).containsExactly(b, b + 64, b + 2 * 64, b + 3 * 64, b + 4 * 64);

        // the next fill continues at the lowest free object
        assertThat(s.fill(m, 3)).isEqualTo(3);
        assertThat(pops(m)).containsExactly(b + 5 * 64, b + 6 * 64, b + 7 * 64);
        assertThat(s.inuse()).isEqualTo(8);
        s.check();
    }

    @Test
    void fillTakesHolesFirstEvenAcrossBitmapWords() {
        final Slab s = slab(c64);
        final Magazine big = new Magazine(128);
        assertThat(s.fill(big, 100)).isEqualTo(100);
        assertThat(s.putBack(s.base + 70 * 64)).isTrue(); // word 1
        assertThat(s.putBack(s.base + 2 * 64)).isTrue(); // word 0
        assertThat(s.inuse()).isEqualTo(98);
        final Magazine m = new Magazine(3);
        assertThat(s.fill(m, 3)).isEqualTo(3);
        assertThat(pops(m)).containsExactly(s.base + 2 * 64, s.base + 70 * 64, s.base + 100 * 64);
        assertThat(s.inuse()).isEqualTo(101);
        s.check();
    }

    @Test
    void fillRespectsMax() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(32);
        assertThat(s.fill(m, 3)).isEqualTo(3);
        assertThat(m.count).isEqualTo(3);
        assertThat(s.inuse()).isEqualTo(3);
        assertThat(s.fill(m, 0)).isZero();
        assertThat(m.count).isEqualTo(3);
        assertThat(s.inuse()).isEqualTo(3);
    }

    @Test
    void fillRespectsTheRoomLeftInTheMagazineAndKeepsItsRounds() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(8);
        for (int i = 0; i < 6; i++) {
            m.rounds[m.count++] = 1000 + i; // rounds already held (values only, never popped to memory)
        }
        assertThat(s.fill(m, 100)).isEqualTo(2);
        assertThat(m.isFull()).isTrue();
        assertThat(m.rounds).containsExactly(1000, 1001, 1002, 1003, 1004, 1005, s.base + 64, s.base);
        assertThat(s.inuse()).isEqualTo(2);
        assertThat(s.free[0]).isEqualTo(-1L << 2);

        assertThat(s.fill(m, 100)).as("a full magazine takes nothing").isZero();
        assertThat(s.inuse()).isEqualTo(2);
        assertThat(s.free[0]).isEqualTo(-1L << 2);
        m.count = 0; // drop the fake rounds
    }

    @Test
    void fillRespectsTheFreeObjectsOfTheSlab() {
        final Slab s = slab(c192);
        final Magazine all = new Magazine(400);
        assertThat(s.fill(all, 339)).isEqualTo(339);
        final Magazine m = new Magazine(32);
        assertThat(s.fill(m, 32)).as("only 2 of 341 left").isEqualTo(2);
        assertThat(pops(m)).containsExactly(s.base + 339L * 192, s.base + 340L * 192);
        assertThat(s.inuse()).isEqualTo(341);
        assertThat(s.freeObjects()).isZero();
        assertThat(s.free).containsOnly(0L);
        assertThat(s.fill(m, 32)).as("an exhausted slab gives nothing").isZero();
        assertThat(m.count).isZero();
        s.check();
    }

    @Test
    void fillingAWholeSlabHandsOutEveryObjectOnceInAscendingOrder() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(32);
        long expected = s.base;
        for (int round = 0; round < 32; round++) {
            assertThat(s.fill(m, 32)).isEqualTo(32);
            for (final long p : pops(m)) {
                assertThat(p).isEqualTo(expected);
                expected += 64;
            }
        }
        assertThat(expected).as("the last object ends the page").isEqualTo(s.base + 65536);
        assertThat(s.inuse()).isEqualTo(1024);
        assertThat(s.free).containsOnly(0L);
        assertThat(s.fill(m, 32)).isZero();
    }

    @Test
    void fillUpdatesOnlyTheInuseFieldOfTheCountersWord() {
        final Slab s = slab(c192);
        s.counters(Counters.withFrozen(s.counters(), true));
        final Magazine m = new Magazine(16);
        s.fill(m, 16);
        assertThat(s.counters()).isEqualTo(Counters.pack(c192.id, 341, 16, true));
        assertThat(s.putBack(m.rounds[--m.count])).isTrue();
        assertThat(s.counters()).isEqualTo(Counters.pack(c192.id, 341, 15, true));
    }

    // ---- putBack ------------------------------------------------------------------------------------

    @Test
    void putBackSetsTheBitAndDecrementsInuse() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(8);
        s.fill(m, 8);
        assertThat(s.putBack(s.base + 3 * 64)).isTrue();
        assertThat(s.free[0]).isEqualTo((-1L << 8) | (1L << 3));
        assertThat(s.inuse()).isEqualTo(7);
        assertThat(Counters.inuse(s.chunk.counters[s.headPage])).isEqualTo(7);
        s.check();
    }

    @Test
    void putBackRefusesADoublePutBackAndChangesNothing() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(8);
        s.fill(m, 8);
        assertThat(s.putBack(s.base + 5 * 64)).isTrue();
        final long word = s.free[0];
        final long counters = s.counters();
        assertThat(s.putBack(s.base + 5 * 64)).as("second putBack of the same object").isFalse();
        assertThat(s.free[0]).isEqualTo(word);
        assertThat(s.counters()).isEqualTo(counters);
        assertThat(s.putBack(s.base + 500 * 64)).as("putBack of an object never handed out").isFalse();
        assertThat(s.inuse()).isEqualTo(7);
        s.check();
    }

    @Test
    void putBackAtBothEndsOfTheSlab() {
        final Slab s = slab(c64);
        final Magazine all = new Magazine(1024);
        assertThat(s.fill(all, 1024)).isEqualTo(1024);
        assertThat(s.putBack(s.base + 1023L * 64)).isTrue();
        assertThat(s.free[15]).isEqualTo(Long.MIN_VALUE); // bit 63 of the last word
        assertThat(s.putBack(s.base)).isTrue();
        assertThat(s.free[0]).isEqualTo(1L);
        assertThat(s.inuse()).isEqualTo(1022);
        s.check();

        final Slab t = slab(c192);
        final Magazine all2 = new Magazine(341);
        assertThat(t.fill(all2, 341)).isEqualTo(341);
        assertThat(t.putBack(t.base + 340L * 192)).isTrue();
        assertThat(t.free[5]).isEqualTo(1L << 20); // object 340 = word 5, bit 20
        assertThat(t.freeObjects()).isEqualTo(1);
        t.check();
    }

    // ---- address arithmetic -------------------------------------------------------------------------

    @Test
    void indexOfMapsEveryByteOfAnObjectToItsIndexAtBothEnds() {
        final Slab s = slab(c192);
        assertThat(s.indexOf(s.base)).isZero();
        assertThat(s.indexOf(s.base + 191)).isZero();
        assertThat(s.indexOf(s.base + 192)).isEqualTo(1);
        assertThat(s.indexOf(s.base + 63 * 192)).isEqualTo(63);
        assertThat(s.indexOf(s.base + 64 * 192)).isEqualTo(64);
        assertThat(s.indexOf(s.base + 340L * 192)).isEqualTo(340);
        assertThat(s.indexOf(s.base + 340L * 192 + 191)).isEqualTo(340);

        final Slab t = slab(c64);
        assertThat(t.indexOf(t.base + 65535)).isEqualTo(1023);
        assertThat(t.base).as("second slab starts one page after the first").isEqualTo(s.base + 65536);
    }

    @Test
    void fillAddressesAreBasePlusIndexTimesSizeAndIndexOfInvertsThem() {
        final Slab s = slab(c192);
        final Magazine all = new Magazine(341);
        s.fill(all, 341);
        for (int i = 0; i < 341; i++) {
            final long address = all.rounds[340 - i];
            assertThat(address).isEqualTo(s.base + (long) i * 192);
            assertThat(s.indexOf(address)).isEqualTo(i);
        }
        assertThat(s.base + 340L * 192 + 192).as("the last object lies inside the page")
            .isLessThanOrEqualTo(s.chunk.pageAddress(s.headPage + 1));
    }

    // ---- mayBeHandedOut (free() of a no-cleaner root) -----------------------------------------------

    @Test
    void onlyAnObjectHandedOutWithACapacityOfItsClassMayBeFreed() {
        final Slab s = slab(c192);
        final Magazine m = new Magazine(2);
        s.fill(m, 2); // objects 0 and 1 handed out, 2..340 free
        final long first = s.base;
        final long second = s.base + 192;
        assertThat(s.mayBeHandedOut(first, 192, a.classes)).isTrue();
        assertThat(s.mayBeHandedOut(second, 129, a.classes)).as("any capacity of the 192 B class").isTrue();
        assertThat(s.mayBeHandedOut(first + 64, 128, a.classes)).as("inside an object").isFalse();
        assertThat(s.mayBeHandedOut(first, 100, a.classes)).as("a capacity of the 128 B class").isFalse();
        assertThat(s.mayBeHandedOut(first, 193, a.classes)).as("more than an object").isFalse();
        assertThat(s.mayBeHandedOut(s.base + 2 * 192, 192, a.classes)).as("an object free in the bitmap").isFalse();
        assertThat(s.mayBeHandedOut(s.base + 341 * 192, 192, a.classes)).as("the waste after the last object")
            .isFalse();
        assertThat(s.mayBeHandedOut(s.base - 192, 192, a.classes)).as("before the slab").isFalse();
        s.putBack(second);
        assertThat(s.mayBeHandedOut(second, 192, a.classes)).as("an object given back").isFalse();
    }

    // ---- check --------------------------------------------------------------------------------------

    @Test
    void checkDetectsABitSetForAnObjectInUse() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(4);
        s.fill(m, 4);
        s.check();
        s.free[0] |= 1L; // object 0 is in use, yet marked free
        assertThatThrownBy(s::check).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("slab invariant broken").hasMessageContaining("free_in_bitmap=1021")
            .hasMessageContaining("inuse=4/1024");
    }

    @Test
    void checkDetectsALostFreeBit() {
        final Slab s = slab(c192);
        s.free[5] &= ~(1L << 20); // object 340 lost: neither free nor counted in use
        assertThatThrownBy(s::check).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("free_in_bitmap=340");
    }

    @Test
    void checkDetectsAnInuseCountThatDisagreesWithTheBitmap() {
        final Slab s = slab(c64);
        s.counters(Counters.withInuse(s.counters(), 1));
        assertThatThrownBy(s::check).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("inuse=1/1024").hasMessageContaining("free_in_bitmap=1024");
    }

    // ---- order --------------------------------------------------------------------------------------

    @Test
    void compareToOrdersByAddress() {
        final Slab low = slab(c64);
        final Slab mid = slab(c192);
        final Slab high = slab(c64);
        assertThat(low.base).isLessThan(mid.base);
        assertThat(mid.base).isLessThan(high.base);
        assertThat(low.compareTo(mid)).isNegative();
        assertThat(mid.compareTo(low)).isPositive();
        assertThat(high.compareTo(low)).isPositive();
        assertThat(mid.compareTo(mid)).isZero();
        final TreeSet<Slab> set = new TreeSet<>(List.of(high, low, mid));
        assertThat(set).containsExactly(low, mid, high);
    }

    @Test
    void compareToTreatsAddressesAsUnsigned() throws ReflectiveOperationException {
        // chunks that own no memory: a Slab only computes its base from the chunk
        final Constructor<Chunk> ctor = Chunk.class.getDeclaredConstructor(long.class, long.class, int.class);
        ctor.setAccessible(true);
        final Chunk lowChunk = ctor.newInstance(0x1000L, 0L, 4);
        final Chunk highChunk = ctor.newInstance(0x8000_0000_0000_0000L, 0L, 4);
        final Slab low = new Slab(lowChunk, 0, c64);
        final Slab high = new Slab(highChunk, 0, c64);
        assertThat(high.compareTo(low)).isPositive();
        assertThat(low.compareTo(high)).isNegative();
    }

    @Test
    void toStringNamesCacheAddressAndUse() {
        final Slab s = slab(c64);
        final Magazine m = new Magazine(3);
        s.fill(m, 3);
        assertThat(s.toString()).isEqualTo("Slab[kmem4j-64 @0x" + Long.toHexString(s.base) + " inuse=3/1024]");
    }
}
