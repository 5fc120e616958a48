package io.kmem4j.samples.kvstore;

import io.kmem4j.samples.support.DirectBuffers;
import io.kmem4j.samples.support.Payload;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * An in-memory key-value store: keys {@code 0 .. keys-1}, each value a direct buffer of its own
 * exact size in a {@link ConcurrentHashMap}.
 *
 * <p>Every put of a key writes the next version of that key. A value's size and content are
 * functions of (key, version), so every read can be verified completely:
 *
 * <pre>
 *  0       8         12                                capacity = sizeOf(key, version)
 *  +-------+---------+---------------------------------+
 *  |  key  | version |  Payload bytes of seed(key, version)
 *  +-------+---------+---------------------------------+
 * </pre>
 *
 * <p>Concurrency: all reads and writes of a value happen inside the map's per-key {@code compute}
 * methods, and so does every read and write of {@code versions[key]}; a reader therefore never
 * sees a value that is being replaced, and a replaced or deleted value is released (after the
 * compute) by the thread that removed it, which nobody else can reach any more. Replaced and
 * deleted values are released with {@link DirectBuffers#free}, except every 8th release of a
 * thread, which drops the value for the garbage collector. Values are thus often released on
 * another thread than the one that allocated them.
 *
 * <p>Thread-safe.
 */
final class KvStore {

    static final int KEY = 0;
    static final int VERSION = 8;
    static final int PAYLOAD = 12;

    /** Every this many releases of a thread, the value is dropped instead of freed. */
    private static final int DROP_EVERY = 8;

    private final ConcurrentHashMap<Long, ByteBuffer> map;
    private final Long[] boxedKeys;
    private final int[] versions; // guarded by the map's lock for the key (compute)
    private final int minSize;
    private final int maxSize;
    private final long seed;
    private final ThreadLocal<long[]> releases = ThreadLocal.withInitial(() -> new long[1]);
    private final LongAdder freed = new LongAdder();
    private final LongAdder dropped = new LongAdder();

    /**
     * @param minSize smallest value, bytes, at least {@link #PAYLOAD}
     * @param maxSize largest value, bytes
     */
    KvStore(int keys, int minSize, int maxSize, long seed) {
        this.map = new ConcurrentHashMap<>(keys * 2);
        this.boxedKeys = new Long[keys];
        for (int k = 0; k < keys; k++) {
            boxedKeys[k] = (long) k;
        }
        this.versions = new int[keys];
        this.minSize = minSize;
        this.maxSize = maxSize;
        this.seed = seed;
    }

    /** The size of version {@code version} of {@code key}'s value. */
    int sizeOf(int key, int version) {
        long span = (long) maxSize - minSize + 1;
        return minSize + (int) Long.remainderUnsigned(Payload.seed(seed ^ key, version), span);
    }

    /**
     * Reads and verifies {@code key}'s value.
     *
     * @return -1 if the key is absent, else the number of wrong bytes (0 if the value is intact)
     */
    long get(int key) {
        long[] result = {-1};
        map.computeIfPresent(boxedKeys[key], (k, value) -> {
            result[0] = mismatches(key, versions[key], value);
            return value;
        });
        return result[0];
    }

    /** Writes the next version of {@code key}'s value, releasing the previous one. */
    void put(int key) {
        ByteBuffer[] previous = new ByteBuffer[1];
        map.compute(boxedKeys[key], (k, old) -> {
            previous[0] = old;
            return newValue(key, ++versions[key]);
        });
        release(previous[0]);
    }

    /** Removes and releases {@code key}'s value; returns false if it was absent. */
    boolean delete(int key) {
        ByteBuffer[] previous = new ByteBuffer[1];
        map.computeIfPresent(boxedKeys[key], (k, old) -> {
            previous[0] = old;
            return null;
        });
        release(previous[0]);
        return previous[0] != null;
    }

    /**
     * Verifies every value, then removes and releases them all. Call when no other thread uses
     * the store.
     *
     * @return {wrong bytes over all values, number of values}
     */
    long[] verifyAndClear() {
        long mismatches = 0;
        long values = 0;
        for (int key = 0; key < boxedKeys.length; key++) {
            ByteBuffer value = map.remove(boxedKeys[key]);
            if (value != null) {
                mismatches += mismatches(key, versions[key], value);
                values++;
                release(value);
            }
        }
        return new long[] {mismatches, values};
    }

    long freed() {
        return freed.sum();
    }

    long dropped() {
        return dropped.sum();
    }

    private ByteBuffer newValue(int key, int version) {
        int size = sizeOf(key, version);
        ByteBuffer value = ByteBuffer.allocateDirect(size);
        value.putLong(KEY, key).putInt(VERSION, version);
        Payload.fill(value, PAYLOAD, size - PAYLOAD, Payload.seed(key, version));
        return value;
    }

    /** Wrong bytes of {@code value} compared with version {@code version} of {@code key}. */
    private long mismatches(int key, int version, ByteBuffer value) {
        int expectedSize = sizeOf(key, version);
        if (value.capacity() != expectedSize) {
            return Math.max(1, Math.abs(value.capacity() - expectedSize));
        }
        long wrong = Payload.differingBytes(value.getLong(KEY) ^ key)
                + Payload.differingBytes(value.getInt(VERSION) ^ version);
        return wrong + Payload.countMismatches(value, PAYLOAD, expectedSize - PAYLOAD,
                Payload.seed(key, version));
    }

    private void release(ByteBuffer value) {
        if (value == null) {
            return;
        }
        if (++releases.get()[0] % DROP_EVERY != 0 && DirectBuffers.free(value)) {
            freed.increment();
        } else {
            dropped.increment(); // left to the garbage collector
        }
    }
}
