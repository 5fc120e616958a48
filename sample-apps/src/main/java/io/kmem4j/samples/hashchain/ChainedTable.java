package io.kmem4j.samples.hashchain;

import io.kmem4j.samples.support.DirectBuffers;
import io.kmem4j.samples.support.Payload;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A hash table with separate chaining whose nodes live off-heap, one small direct buffer per node.
 *
 * <p>Nodes are addressed by index: {@code nodes[i]} is node {@code i}'s buffer, {@code heads[b]}
 * the index of the first node of bucket {@code b}, and each node stores the index of the next node
 * of its chain ({@link #NIL} at the end), so a chain walk is a pointer chase through direct
 * buffers. Indices of deleted nodes are reused. A node's buffer:
 *
 * <pre>
 *  0        8       12        16           20                       capacity
 *  +--------+--------+---------+------------+------------------------+
 *  |  key   |  next  | ordinal | generation |  value (Payload bytes) |
 *  +--------+--------+---------+------------+------------------------+
 * </pre>
 *
 * where the value is the {@link Payload} sequence of {@link #valueSeed(long, int)}.
 *
 * <p>Deleted and cleared nodes are released with {@link DirectBuffers#free}, except every 8th,
 * which is dropped for the garbage collector.
 *
 * <p>Not thread-safe: use from one thread.
 */
final class ChainedTable {

    static final int NIL = -1;
    static final int KEY = 0;
    static final int NEXT = 8;
    static final int ORDINAL = 12;
    static final int GENERATION = 16;
    static final int VALUE = 20;

    /** Every this many releases, the node's buffer is dropped instead of freed. */
    private static final int DROP_EVERY = 8;

    private final int[] heads;
    private ByteBuffer[] nodes = new ByteBuffer[16];
    private int[] freeIndices = new int[16];
    private int freeCount;
    private int used; // indices 0..used-1 have been handed out at least once
    private int size;
    private long releases;
    private long freed;
    private long dropped;

    ChainedTable(int buckets) {
        heads = new int[buckets];
        Arrays.fill(heads, NIL);
    }

    int buckets() {
        return heads.length;
    }

    int size() {
        return size;
    }

    long freed() {
        return freed;
    }

    long dropped() {
        return dropped;
    }

    int bucketOf(long key) {
        return (int) Long.remainderUnsigned(key, heads.length);
    }

    static long valueSeed(long key, int generation) {
        return Payload.seed(key, generation);
    }

    /** Allocates a node of {@code capacity} bytes ({@code >= VALUE}) and links it first in its bucket. */
    void insert(long key, int ordinal, int generation, int capacity) {
        ByteBuffer node = ByteBuffer.allocateDirect(capacity);
        int bucket = bucketOf(key);
        node.putLong(KEY, key)
                .putInt(NEXT, heads[bucket])
                .putInt(ORDINAL, ordinal)
                .putInt(GENERATION, generation);
        Payload.fill(node, VALUE, capacity - VALUE, valueSeed(key, generation));
        int index = newIndex();
        nodes[index] = node;
        heads[bucket] = index;
        size++;
    }

    /** Unlinks and releases the node with {@code key}; returns false if there is none. */
    boolean delete(long key) {
        int bucket = bucketOf(key);
        int previous = NIL;
        for (int i = heads[bucket]; i != NIL; previous = i, i = nodes[i].getInt(NEXT)) {
            ByteBuffer node = nodes[i];
            if (node.getLong(KEY) == key) {
                int next = node.getInt(NEXT);
                if (previous == NIL) {
                    heads[bucket] = next;
                } else {
                    nodes[previous].putInt(NEXT, next);
                }
                nodes[i] = null;
                freeIndex(i);
                size--;
                release(node);
                return true;
            }
        }
        return false;
    }

    /** The buffer of the first node of {@code bucket}, or {@code NIL}. */
    int head(int bucket) {
        return heads[bucket];
    }

    /** The buffer of node {@code index}. */
    ByteBuffer node(int index) {
        return nodes[index];
    }

    /** Unlinks and releases every node. */
    void clear() {
        for (int b = 0; b < heads.length; b++) {
            for (int i = heads[b]; i != NIL; ) {
                ByteBuffer node = nodes[i];
                int next = node.getInt(NEXT);
                nodes[i] = null;
                release(node);
                i = next;
            }
            heads[b] = NIL;
        }
        Arrays.fill(nodes, null);
        used = 0;
        freeCount = 0;
        size = 0;
    }

    private int newIndex() {
        if (freeCount > 0) {
            return freeIndices[--freeCount];
        }
        if (used == nodes.length) {
            nodes = Arrays.copyOf(nodes, used * 2);
        }
        return used++;
    }

    private void freeIndex(int index) {
        if (freeCount == freeIndices.length) {
            freeIndices = Arrays.copyOf(freeIndices, freeCount * 2);
        }
        freeIndices[freeCount++] = index;
    }

    private void release(ByteBuffer node) {
        if (++releases % DROP_EVERY != 0 && DirectBuffers.free(node)) {
            freed++;
        } else {
            dropped++; // left to the garbage collector
        }
    }
}
