package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Unit tests of {@link Magazine}: the round stack, its full and empty states and the re-sort for ascending pops. */
class MagazineTest {

    private static void push(final Magazine m, final long... addresses) {
        for (final long a : addresses) {
            m.rounds[m.count++] = a;
        }
    }

    private static long[] popAll(final Magazine m) {
        final long[] out = new long[m.count];
        for (int i = 0; i < out.length; i++) {
            out[i] = m.rounds[--m.count];
        }
        return out;
    }

    @Test
    void newMagazineIsEmptyWithTheGivenCapacity() {
        final Magazine m = new Magazine(4);
        assertThat(m.rounds).hasSize(4);
        assertThat(m.count).isZero();
        assertThat(m.isEmpty()).isTrue();
        assertThat(m.isFull()).isFalse();
    }

    @Test
    void isFullOnlyAtCapacityAndIsEmptyOnlyAtZero() {
        final Magazine m = new Magazine(3);
        push(m, 0x100);
        assertThat(m.isEmpty()).isFalse();
        assertThat(m.isFull()).isFalse();
        push(m, 0x200);
        assertThat(m.isFull()).isFalse();
        push(m, 0x300);
        assertThat(m.isFull()).isTrue();
        assertThat(m.isEmpty()).isFalse();
        m.count--;
        assertThat(m.isFull()).isFalse();
        m.count = 0;
        assertThat(m.isEmpty()).isTrue();
    }

    @Test
    void oneRoundMagazineIsFullAfterOnePush() {
        final Magazine m = new Magazine(1);
        assertThat(m.isEmpty()).isTrue();
        assertThat(m.isFull()).isFalse();
        push(m, 0x40);
        assertThat(m.isFull()).isTrue();
        assertThat(m.isEmpty()).isFalse();
    }

    @Test
    void sortForAscendingPopsStoresTheLowestAddressOnTop() {
        final Magazine m = new Magazine(8);
        push(m, 0x3000, 0x1000, 0x4000, 0x2000); // frees in any order
        m.sortForAscendingPops();
        assertThat(m.count).isEqualTo(4);
        assertThat(m.rounds).startsWith(0x4000, 0x3000, 0x2000, 0x1000);
        assertThat(popAll(m)).containsExactly(0x1000, 0x2000, 0x3000, 0x4000);
    }

    @Test
    void sortForAscendingPopsWithAnOddCountAndAFullMagazine() {
        final Magazine m = new Magazine(5);
        push(m, 0x500, 0x100, 0x400, 0x200, 0x300);
        m.sortForAscendingPops();
        assertThat(m.isFull()).isTrue();
        assertThat(m.rounds).containsExactly(0x500, 0x400, 0x300, 0x200, 0x100);
        assertThat(popAll(m)).containsExactly(0x100, 0x200, 0x300, 0x400, 0x500);
    }

    @Test
    void sortForAscendingPopsTouchesOnlyTheRoundsHeld() {
        final Magazine m = new Magazine(6);
        m.rounds[3] = 7;
        m.rounds[4] = 9;
        m.rounds[5] = 1; // stale slots above count
        push(m, 0x20, 0x30, 0x10);
        m.sortForAscendingPops();
        assertThat(m.rounds).containsExactly(0x30, 0x20, 0x10, 7, 9, 1);
        assertThat(m.count).isEqualTo(3);
    }

    @Test
    void sortForAscendingPopsOfLifoFreesReversesThem() {
        // frees pushed in ascending order would be popped descending (LIFO) without the sort
        final Magazine m = new Magazine(32);
        for (int i = 0; i < 32; i++) {
            push(m, 0x10_0000L + i * 64L);
        }
        m.sortForAscendingPops();
        final long[] pops = popAll(m);
        for (int i = 0; i < 32; i++) {
            assertThat(pops[i]).isEqualTo(0x10_0000L + i * 64L);
        }
    }

    @Test
    void sortForAscendingPopsOfZeroOrOneRoundChangesNothing() {
        final Magazine empty = new Magazine(2);
        empty.rounds[0] = 5;
        empty.rounds[1] = 3;
        empty.sortForAscendingPops();
        assertThat(empty.rounds).containsExactly(5, 3);
        assertThat(empty.count).isZero();

        final Magazine one = new Magazine(2);
        push(one, 0x80);
        one.rounds[1] = 1;
        one.sortForAscendingPops();
        assertThat(one.rounds).containsExactly(0x80, 1);
        assertThat(one.count).isEqualTo(1);
    }

    @Test
    void sortForAscendingPopsIsIdempotent() {
        final Magazine m = new Magazine(4);
        push(m, 0x2, 0x4, 0x1, 0x3);
        m.sortForAscendingPops();
        m.sortForAscendingPops();
        assertThat(m.rounds).containsExactly(0x4, 0x3, 0x2, 0x1);
    }
}
