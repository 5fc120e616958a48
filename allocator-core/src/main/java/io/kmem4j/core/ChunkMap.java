package io.kmem4j.core;

/**
 * Membership test from an address to the chunk that holds it, in O(1) and without touching the
 * memory at that address (a foreign address is rejected by looking at our own tables only).
 *
 * <p>The address space is cut into windows of {@code 2^shift} bytes, at least one chunk long, so a
 * chunk touches at most two windows. An open-addressing table maps window number to chunk; a window
 * shared by the end of one chunk and the start of another has two entries.
 *
 * <p>Threads: {@link #find(long)} may be called by any thread without locking (it reads one
 * immutable table through a volatile field). {@link #add} and {@link #remove} copy the table and are
 * serialised by the caller's chunk lock.
 */
final class ChunkMap {
    private static final class Table {
        final long[] keys;
        final Chunk[] chunks;
        final int mask;
        final int count;

        Table(final int capacity, final int count) {
            this.keys = new long[capacity];
            this.chunks = new Chunk[capacity];
            this.mask = capacity - 1;
            this.count = count;
        }
    }

    private final int shift;
    private volatile Table table = new Table(16, 0);

    ChunkMap(final long chunkBytes) {
        this.shift = 64 - Long.numberOfLeadingZeros(chunkBytes - 1);
    }

    private static int slot(final long key, final int mask) {
        final long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & mask;
    }

    /** @return the chunk holding {@code address}, or {@code null} when the address is not ours. */
    Chunk find(final long address) {
        final Table t = table;
        final long key = address >>> shift;
        for (int i = slot(key, t.mask);; i = (i + 1) & t.mask) {
            final Chunk c = t.chunks[i];
            if (c == null) {
                return null;
            }
            if (t.keys[i] == key && c.contains(address)) {
                return c;
            }
        }
    }

    /** @return number of chunks registered. */
    int size() {
        return table.count;
    }

    void add(final Chunk chunk) {
        rebuild(chunk, null);
    }

    void remove(final Chunk chunk) {
        rebuild(null, chunk);
    }

    /** @return a snapshot of the registered chunks. */
    java.util.List<Chunk> chunks() {
        final Table t = table;
        final java.util.List<Chunk> out = new java.util.ArrayList<>();
        for (int i = 0; i < t.chunks.length; i++) {
            final Chunk c = t.chunks[i];
            if (c != null && t.keys[i] == (c.base >>> shift)) {
                out.add(c);
            }
        }
        return out;
    }

    private void rebuild(final Chunk added, final Chunk removed) {
        final java.util.List<Chunk> all = chunks();
        if (removed != null) {
            all.remove(removed);
        }
        if (added != null) {
            all.add(added);
        }
        int capacity = 16;
        while (capacity < all.size() * 8) {
            capacity <<= 1;
        }
        final Table t = new Table(capacity, all.size());
        for (final Chunk c : all) {
            put(t, c.base >>> shift, c);
            final long lastKey = (c.base + c.size - 1) >>> shift;
            if (lastKey != c.base >>> shift) {
                put(t, lastKey, c);
            }
        }
        table = t;
    }

    private static void put(final Table t, final long key, final Chunk c) {
        int i = slot(key, t.mask);
        while (t.chunks[i] != null) {
            i = (i + 1) & t.mask;
        }
        t.keys[i] = key;
        t.chunks[i] = c;
    }
}
