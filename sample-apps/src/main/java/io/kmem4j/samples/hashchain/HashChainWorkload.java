package io.kmem4j.samples.hashchain;

import io.kmem4j.samples.support.Payload;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.SplittableRandom;

/**
 * The hashchain workload on a {@link ChainedTable}: insert {@code nodes} keys, delete a random half,
 * insert those keys again (new generation, new node size), verify every node, then walk all chains
 * {@code warmups} times untimed (so the JIT has compiled the walk) and {@code traversals} times
 * timed, and finally release every node.
 *
 * <p>Key {@code ordinal} is {@code mix(mix(seed) + ordinal)}, distinct for distinct ordinals since
 * {@code mix} is a bijection. Node sizes and the deleted half come from a {@link SplittableRandom}
 * seeded with {@code seed}, so a run is reproducible.
 *
 * <p>Not thread-safe: {@link #run} uses the calling thread only.
 */
final class HashChainWorkload {

    /** What a run did; {@code mismatches} counts bad or missing nodes and bad traversals. */
    record Result(int nodes, int buckets, int deleted, long mismatches, long nodeBytes,
            long buildNanos, long traversalNanos, long freed, long dropped) {}

    private final int nodes;
    private final int buckets;
    private final int warmups;
    private final int traversals;
    private final int minSize;
    private final int maxSize;
    private final long seed;

    /**
     * @param warmups untimed traversals before the timed ones (checked all the same)
     * @param minSize smallest node, bytes, at least {@link ChainedTable#VALUE}
     * @param maxSize largest node, bytes
     */
    HashChainWorkload(int nodes, int buckets, int warmups, int traversals, int minSize, int maxSize,
            long seed) {
        this.nodes = nodes;
        this.buckets = buckets;
        this.warmups = warmups;
        this.traversals = traversals;
        this.minSize = minSize;
        this.maxSize = maxSize;
        this.seed = seed;
    }

    long keyOf(int ordinal) {
        return Payload.mix(Payload.mix(seed) + ordinal);
    }

    Result run() {
        SplittableRandom random = new SplittableRandom(seed);
        ChainedTable table = new ChainedTable(buckets);
        int[] capacities = new int[nodes];
        byte[] generations = new byte[nodes];
        long mismatches = 0;

        long start = System.nanoTime();
        for (int ordinal = 0; ordinal < nodes; ordinal++) {
            capacities[ordinal] = random.nextInt(minSize, maxSize + 1);
            table.insert(keyOf(ordinal), ordinal, 0, capacities[ordinal]);
        }
        int[] order = shuffledOrdinals(random);
        int deleted = nodes / 2;
        for (int d = 0; d < deleted; d++) {
            if (!table.delete(keyOf(order[d]))) {
                mismatches++;
            }
        }
        for (int d = 0; d < deleted; d++) {
            int ordinal = order[d];
            capacities[ordinal] = random.nextInt(minSize, maxSize + 1);
            generations[ordinal] = 1;
            table.insert(keyOf(ordinal), ordinal, 1, capacities[ordinal]);
        }
        long buildNanos = System.nanoTime() - start;

        Verification verification = verify(table, capacities, generations);
        mismatches += verification.mismatches;

        for (int t = 0; t < warmups; t++) {
            if (traverse(table) != verification.checksum) {
                mismatches++;
            }
        }
        start = System.nanoTime();
        for (int t = 0; t < traversals; t++) {
            if (traverse(table) != verification.checksum) {
                mismatches++;
            }
        }
        long traversalNanos = System.nanoTime() - start;

        table.clear();
        return new Result(nodes, buckets, deleted, mismatches, verification.bytes, buildNanos,
                traversalNanos, table.freed(), table.dropped());
    }

    private int[] shuffledOrdinals(SplittableRandom random) {
        int[] order = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            order[i] = i;
        }
        for (int i = nodes - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private static final class Verification {
        long mismatches;
        long checksum;
        long bytes;
    }

    /** Checks every node's bucket, key, size, generation and value bytes, and that none is missing. */
    private Verification verify(ChainedTable table, int[] capacities, byte[] generations) {
        Verification v = new Verification();
        BitSet seen = new BitSet(nodes);
        for (int b = 0; b < table.buckets(); b++) {
            for (int i = table.head(b); i != ChainedTable.NIL; ) {
                ByteBuffer node = table.node(i);
                int ordinal = node.getInt(ChainedTable.ORDINAL);
                long key = node.getLong(ChainedTable.KEY);
                boolean intact = ordinal >= 0 && ordinal < nodes && !seen.get(ordinal)
                        && key == keyOf(ordinal)
                        && table.bucketOf(key) == b
                        && node.capacity() == capacities[ordinal]
                        && node.getInt(ChainedTable.GENERATION) == generations[ordinal]
                        && Payload.countMismatches(node, ChainedTable.VALUE,
                                node.capacity() - ChainedTable.VALUE,
                                ChainedTable.valueSeed(key, generations[ordinal])) == 0;
                if (intact) {
                    seen.set(ordinal);
                } else {
                    v.mismatches++;
                }
                v.checksum += checksum(node);
                v.bytes += node.capacity();
                i = node.getInt(ChainedTable.NEXT);
            }
        }
        v.mismatches += nodes - seen.cardinality(); // missing nodes
        return v;
    }

    /** Walks every chain and returns the sum of the nodes' checksums. */
    private static long traverse(ChainedTable table) {
        long sum = 0;
        for (int b = 0; b < table.buckets(); b++) {
            for (int i = table.head(b); i != ChainedTable.NIL; ) {
                ByteBuffer node = table.node(i);
                sum += checksum(node);
                i = node.getInt(ChainedTable.NEXT);
            }
        }
        return sum;
    }

    /** Reads the whole node: header and value. */
    private static long checksum(ByteBuffer node) {
        int capacity = node.capacity();
        long h = 0;
        int offset = 0;
        for (; offset + Long.BYTES <= capacity; offset += Long.BYTES) {
            h = Long.rotateLeft(h, 5) ^ node.getLong(offset);
        }
        for (; offset < capacity; offset++) {
            h = Long.rotateLeft(h, 5) ^ node.get(offset);
        }
        return h;
    }
}
