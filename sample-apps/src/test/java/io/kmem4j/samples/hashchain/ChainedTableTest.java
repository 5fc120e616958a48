package io.kmem4j.samples.hashchain;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChainedTableTest {

    @Test
    void chainsNodesOfOneBucketAndUnlinksAnyOfThem() {
        ChainedTable table = new ChainedTable(1); // every key in bucket 0
        for (int k = 0; k < 5; k++) {
            table.insert(100 + k, k, 0, 64);
        }
        assertThat(keys(table, 0)).containsExactly(104L, 103L, 102L, 101L, 100L);

        assertThat(table.delete(102)).isTrue(); // middle
        assertThat(table.delete(104)).isTrue(); // head
        assertThat(table.delete(100)).isTrue(); // tail
        assertThat(table.delete(100)).isFalse();
        assertThat(keys(table, 0)).containsExactly(103L, 101L);
        assertThat(table.size()).isEqualTo(2);

        table.insert(200, 9, 1, 80); // reuses a freed index
        assertThat(keys(table, 0)).containsExactly(200L, 103L, 101L);
        ByteBuffer node = table.node(table.head(0));
        assertThat(node.capacity()).isEqualTo(80);
        assertThat(node.getInt(ChainedTable.ORDINAL)).isEqualTo(9);
        assertThat(node.getInt(ChainedTable.GENERATION)).isEqualTo(1);

        table.clear();
        assertThat(table.size()).isZero();
        assertThat(table.head(0)).isEqualTo(ChainedTable.NIL);
        assertThat(table.freed() + table.dropped()).isEqualTo(6);
        assertThat(table.dropped()).isZero(); // only every 8th release is dropped
    }

    @Test
    void spreadsKeysOverBuckets() {
        ChainedTable table = new ChainedTable(7);
        assertThat(table.bucketOf(-1L)).isBetween(0, 6);
        assertThat(table.bucketOf(15)).isEqualTo(1);
    }

    private static List<Long> keys(ChainedTable table, int bucket) {
        List<Long> keys = new ArrayList<>();
        for (int i = table.head(bucket); i != ChainedTable.NIL; i = table.node(i).getInt(ChainedTable.NEXT)) {
            keys.add(table.node(i).getLong(ChainedTable.KEY));
        }
        return keys;
    }
}
