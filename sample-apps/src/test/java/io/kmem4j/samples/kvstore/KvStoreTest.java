package io.kmem4j.samples.kvstore;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KvStoreTest {

    @Test
    void everyPutWritesTheNextVersionAndGetsVerifyIt() {
        KvStore store = new KvStore(3, 24, 2048, 2);
        assertThat(store.get(1)).isEqualTo(-1);
        store.put(1);
        assertThat(store.get(1)).isZero();
        store.put(1);
        assertThat(store.get(1)).isZero();
        assertThat(store.delete(1)).isTrue();
        assertThat(store.delete(1)).isFalse();
        assertThat(store.get(1)).isEqualTo(-1);
        store.put(1); // version 3 now
        store.put(2);
        assertThat(store.get(1)).isZero();

        long[] left = store.verifyAndClear();
        assertThat(left).containsExactly(0, 2);
        assertThat(store.get(2)).isEqualTo(-1);
        // released: version 1 of key 1 (replaced), version 2 (deleted), then both values left
        assertThat(store.freed() + store.dropped()).isEqualTo(4);
    }

    @Test
    void sizesAreAFunctionOfKeyAndVersionWithinBounds() {
        KvStore store = new KvStore(100, 24, 40, 2);
        for (int key = 0; key < 100; key++) {
            for (int version = 1; version < 5; version++) {
                assertThat(store.sizeOf(key, version)).isBetween(24, 40)
                        .isEqualTo(store.sizeOf(key, version));
            }
        }
        assertThat(new KvStore(1, 30, 30, 2).sizeOf(0, 1)).isEqualTo(30);
    }
}
