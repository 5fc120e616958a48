package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Unit tests of {@link Depot}: a depot of at most 2 full magazines of 8 rounds. */
class DepotTest {
    private static final int ROUNDS = 8;
    private static final int LIMIT = 2;

    private final Depot depot = new Depot(LIMIT, ROUNDS);

    private static Magazine full(final long... rounds) {
        final Magazine m = new Magazine(ROUNDS);
        for (final long r : rounds) {
            m.push(r);
        }
        return m;
    }

    @Test
    void takesFullMagazinesUpToItsLimitLastInFirstOut() {
        final Magazine m1 = full(1, 2);
        final Magazine m2 = full(3);
        final Magazine m3 = full(4);
        assertThat(depot.exchangeForFull(new Magazine(ROUNDS))).as("empty depot").isNull();
        assertThat(depot.exchanges).isZero();
        assertThat(depot.exchangeForEmpty(m1)).isNotNull();
        assertThat(depot.exchangeForEmpty(m2)).isNotNull();
        assertThat(depot.exchangeForEmpty(m3)).as("at the limit: the caller keeps its magazine").isNull();
        assertThat(depot.exchanges).as("a refused exchange is no exchange").isEqualTo(2);
        assertThat(depot.objects()).isEqualTo(3);
        assertThat(depot.exchangeForFull(new Magazine(ROUNDS))).as("last in, first out").isSameAs(m2);
        assertThat(depot.exchangeForEmpty(m3)).as("room again").isNotNull();
        assertThat(depot.exchangeForFull(new Magazine(ROUNDS))).isSameAs(m3);
        assertThat(depot.exchangeForFull(new Magazine(ROUNDS))).isSameAs(m1);
        assertThat(depot.exchangeForFull(new Magazine(ROUNDS))).isNull();
        assertThat(depot.objects()).isZero();
        assertThat(depot.exchanges).isEqualTo(6);
    }

    @Test
    void aFullMagazineComesOutSortedSoPopsAscend() {
        depot.exchangeForEmpty(full(0x3000, 0x1000, 0x2000));
        final Magazine m = depot.exchangeForFull(new Magazine(ROUNDS));
        assertThat(m.pop()).isEqualTo(0x1000);
        assertThat(m.pop()).isEqualTo(0x2000);
        assertThat(m.pop()).isEqualTo(0x3000);
    }

    @Test
    void theSpentMagazineOfAnExchangeIsKeptAndReusedAsTheNextEmptyOne() {
        final Magazine spent = new Magazine(ROUNDS);
        depot.exchangeForEmpty(full(1));
        depot.exchangeForFull(spent);
        assertThat(depot.takeEmpty()).as("a kept empty magazine is reused").isSameAs(spent);
    }

    @Test
    void takeEmptyCreatesAMagazineWhenTheDepotHasNone() {
        final Magazine m = depot.takeEmpty();
        assertThat(m.rounds).hasSize(ROUNDS);
        assertThat(m.isEmpty()).isTrue();
        assertThat(depot.takeEmpty()).as("a fresh one each time").isNotSameAs(m);
    }

    @Test
    void keepsAtMostOneEmptyMagazineMoreThanItsLimit() {
        final Magazine[] ms = new Magazine[LIMIT + 2];
        for (int i = 0; i < ms.length; i++) {
            ms[i] = new Magazine(ROUNDS);
            depot.keepEmpty(ms[i]);
        }
        // kept: ms[0..LIMIT]; ms[LIMIT + 1] was dropped
        final List<Magazine> taken = new ArrayList<>();
        for (int i = 0; i < LIMIT + 1; i++) {
            taken.add(depot.takeEmpty());
        }
        assertThat(taken).containsExactly(ms[2], ms[1], ms[0]);
        assertThat(depot.takeEmpty()).isNotIn((Object[]) ms);
    }

    @Test
    void pollFullHandsOutFullMagazinesWithoutCountingAnExchange() {
        final Magazine m = full(7);
        depot.exchangeForEmpty(m);
        final long exchanges = depot.exchanges;
        assertThat(depot.pollFull()).isSameAs(m);
        assertThat(depot.pollFull()).isNull();
        assertThat(depot.exchanges).isEqualTo(exchanges);
    }
}
