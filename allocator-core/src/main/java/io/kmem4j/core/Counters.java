package io.kmem4j.core;

/**
 * The 64-bit counters word each slab carries (the SLUB {@code cache_id} patch series: SLUB keeps a
 * 16-bit {@code cache_id} in the high bits of {@code slab->counters} instead of a
 * {@code slab->slab_cache} pointer).
 *
 * <pre>
 *  63            48 47 46 45                 23 22                  0
 * +----------------+--+--+---------------------+---------------------+
 * |    cache id    |r |F |       objects       |        inuse        |
 * +----------------+--+--+---------------------+---------------------+
 *   inuse   objects handed out of the slab's bitmap (live, or waiting in a magazine or remote batch)
 *   objects objects the slab holds
 *   F       frozen: the slab is some thread's current slab; only that thread takes from its bitmap
 *   r       reserved, zero
 * </pre>
 *
 * <p>The free path reads the word once and finds its cache by {@code id -> cache table}: no
 * per-object header, no pointer from slab to cache.
 */
final class Counters {
    static final int INUSE_BITS = 23;
    static final int OBJECTS_SHIFT = 23;
    static final int FROZEN_SHIFT = 46;
    static final int CACHE_ID_SHIFT = 48;
    static final long INUSE_MASK = (1L << INUSE_BITS) - 1;
    static final long OBJECTS_MASK = INUSE_MASK;
    static final int MAX_OBJECTS = (int) OBJECTS_MASK;

    private Counters() {
    }

    static long pack(final int cacheId, final int objects, final int inuse, final boolean frozen) {
        return ((long) cacheId << CACHE_ID_SHIFT) | (frozen ? 1L << FROZEN_SHIFT : 0L)
            | ((long) objects << OBJECTS_SHIFT) | inuse;
    }

    static int cacheId(final long word) {
        return (int) (word >>> CACHE_ID_SHIFT);
    }

    static int objects(final long word) {
        return (int) ((word >>> OBJECTS_SHIFT) & OBJECTS_MASK);
    }

    static int inuse(final long word) {
        return (int) (word & INUSE_MASK);
    }

    static boolean frozen(final long word) {
        return (word & (1L << FROZEN_SHIFT)) != 0;
    }

    static long withInuse(final long word, final int inuse) {
        return (word & ~INUSE_MASK) | inuse;
    }

    static long withFrozen(final long word, final boolean frozen) {
        return frozen ? word | (1L << FROZEN_SHIFT) : word & ~(1L << FROZEN_SHIFT);
    }
}
