package io.kmem4j.core;

/**
 * The one contiguous table of cache descriptors, indexed by the 16-bit cache id kept in each
 * slab's {@link Counters} word (the SLUB {@code cache_id} patch series: {@code cache = base + id * stride}).
 * In Java the table is an array of references, so the free path is
 * {@code address -> slab -> counters -> id -> TABLE[id]}: one indexed load, no pointer kept in the slab.
 *
 * <p>Id 0 is never used (a zero counters word means "no slab"). An id is released only when its
 * cache has no slab left (see {@link SlabCache#retireIfEmpty()}), so a stale counters word can
 * never name a newer cache. A warning is logged once when 90% of the id space is in use.
 *
 * <p>Threads: {@link #get(int)} is lock-free (a plain load; a cache is published to other threads
 * only through the slab memory they obtained under a lock or the chunk map's volatile table);
 * registration and release are synchronized.
 */
final class CacheTable {
    static final int CAPACITY = 1 << 16;
    private static final SlabCache[] TABLE = new SlabCache[CAPACITY];
    private static int used;
    private static int cursor = 1;
    private static boolean warned;

    private CacheTable() {
    }

    static SlabCache get(final int id) {
        return TABLE[id];
    }

    /**
     * @return a fresh id for {@code cache}
     * @throws IllegalStateException {@code "cache id space exhausted: 65535 ids in use"}
     */
    static synchronized int register(final SlabCache cache) {
        if (used == CAPACITY - 1) {
            throw new IllegalStateException("cache id space exhausted: " + used + " ids in use");
        }
        while (TABLE[cursor] != null) {
            cursor = cursor == CAPACITY - 1 ? 1 : cursor + 1;
        }
        final int id = cursor;
        TABLE[id] = cache;
        used++;
        cursor = cursor == CAPACITY - 1 ? 1 : cursor + 1;
        if (!warned && used >= (CAPACITY - 1) * 9 / 10) {
            warned = true;
            System.getLogger("io.kmem4j").log(System.Logger.Level.WARNING,
                "kmem4j: 90% of the cache id space is in use (" + used + " of " + (CAPACITY - 1) + ")");
        }
        return id;
    }

    static synchronized void release(final int id) {
        if (TABLE[id] != null) {
            TABLE[id] = null;
            used--;
        }
    }

    static synchronized int used() {
        return used;
    }
}
