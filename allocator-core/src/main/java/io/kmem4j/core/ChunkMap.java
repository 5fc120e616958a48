package io.kmem4j.core;

/**
 * Membership test from an address to the chunk that holds it, in O(1) and without touching the
 * memory at that address (a foreign address is rejected by looking at our own tables only).
 *
 * <p>The address space is cut into windows of {@code 2^shift} bytes, the largest power of two not
 * above the chunk size, so a window holds parts of at most two chunks (the end of one, the start of
 * the next: a chunk wholly inside a window would be smaller than it) and a chunk touches at most
 * three windows. A table maps window number to those two chunks and the address where the second
 * starts. Each window's entry sits at its hash slot or the next one, which {@link #rebuild} makes
 * true (it grows the table or changes the hash until it is).
 *
 * <p>Why this shape: {@link #find} runs inside the allocator's hit and free paths, which C2 compiles,
 * and C2 compiles a branch it has never seen taken as a trap that throws the compiled code away. With
 * a probing loop, the branch "this slot holds another window" was first taken when the heap grew its
 * second chunk, and threw away every compiled method that had {@code find} inlined (seven in the
 * {@code pipeline} sample, each compiled again, larger: JFR {@code jdk.Deoptimization},
 * {@code unstable_if}). Here the slot and the chunk are chosen with arithmetic; the only branches
 * left test whether the address is ours, which for the allocator's own addresses is always true.
 *
 * <p>Threads: {@link #find(long)} may be called by any thread without locking (it reads one
 * immutable table through a volatile field). {@link #add} and {@link #remove} copy the table and are
 * serialised by the caller's chunk lock.
 */
final class ChunkMap {
    /** A key no window has ({@code address >>> shift} with {@code shift >= 16} is never negative). */
    private static final long NO_KEY = -1;

    private static final class Table {
        /** Window numbers, {@link #NO_KEY} where free; one slot more than the hash reaches, for the next-slot rule. */
        final long[] keys;
        /** Two per slot: the chunk below {@link #bounds} and the one from it on (the same chunk when the window has one). */
        final Chunk[] chunks;
        /** Per slot: where the window's second chunk starts ({@code 0} when it has one). */
        final long[] bounds;
        final long multiplier;
        /** {@code 64 - log2(capacity)}: the slot is the product's top bits. */
        final int hashShift;
        /** Every chunk, in the order added. */
        final Chunk[] all;

        Table(final int capacity, final long multiplier, final Chunk[] all) {
            this.keys = new long[capacity + 1];
            java.util.Arrays.fill(keys, NO_KEY);
            this.chunks = new Chunk[2 * (capacity + 1)];
            this.bounds = new long[capacity + 1];
            this.multiplier = multiplier;
            this.hashShift = 64 - Integer.numberOfTrailingZeros(capacity);
            this.all = all;
        }

        int slot(final long key) {
            return (int) ((key * multiplier) >>> hashShift);
        }
    }

    /** Odd multipliers (Fibonacci hashing, then others) for tables whose windows would not sit at their slot or the next. */
    private static final long[] MULTIPLIERS = {
        0x9E3779B97F4A7C15L, 0xC2B2AE3D27D4EB4FL, 0x165667B19E3779F9L, 0xD6E8FEB86659FD93L};

    private final int shift;
    private volatile Table table = new Table(16, MULTIPLIERS[0], new Chunk[0]);

    /** @param chunkBytes the size of every chunk this map will hold (at least one 64 KiB page) */
    ChunkMap(final long chunkBytes) {
        this.shift = 63 - Long.numberOfLeadingZeros(chunkBytes);
    }

    /** @return the chunk holding {@code address}, or {@code null} when the address is not ours. */
    Chunk find(final long address) {
        final Table t = table;
        final long key = address >>> shift;
        final int h = t.slot(key);
        final long atH = t.keys[h] ^ key;
        final int i = h + (int) ((atH | -atH) >>> 63); // h when the window is there, else the next slot
        final Chunk c = t.chunks[2 * i + (int) ((t.bounds[i] - address - 1) >>> 63)]; // the second from its bound on
        return t.keys[i] == key && c.contains(address) ? c : null;
    }

    /** @return number of chunks registered. */
    int size() {
        return table.all.length;
    }

    void add(final Chunk chunk) {
        final Chunk[] all = table.all;
        final Chunk[] next = java.util.Arrays.copyOf(all, all.length + 1);
        next[all.length] = chunk;
        table = build(next);
    }

    void remove(final Chunk chunk) {
        final java.util.List<Chunk> next = new java.util.ArrayList<>(java.util.Arrays.asList(table.all));
        if (next.remove(chunk)) {
            table = build(next.toArray(new Chunk[0]));
        }
    }

    /** @return a snapshot of the registered chunks. */
    java.util.List<Chunk> chunks() {
        return java.util.List.of(table.all);
    }

    /** A table holding {@code all}: at least eight slots a window, more (or another hash) until every window sits at its slot or the next. */
    private Table build(final Chunk[] all) {
        final java.util.Map<Long, Chunk[]> windows = new java.util.HashMap<>();
        for (final Chunk c : all) {
            for (long w = c.base >>> shift; w <= (c.base + c.size - 1) >>> shift; w++) {
                Chunk[] two = windows.get(w);
                if (two == null) { // (no lambda: the first growth runs at a program's first direct buffer)
                    two = new Chunk[2];
                    windows.put(w, two);
                }
                if (two[1] != null) {
                    throw new IllegalStateException("a window holds parts of three chunks: every chunk must be of this map's size");
                }
                two[two[0] == null ? 0 : 1] = c;
            }
        }
        int capacity = 16;
        while (capacity < windows.size() * 8) {
            capacity <<= 1;
        }
        for (;; capacity <<= 1) {
            if (capacity > 1 << 28) {
                throw new IllegalStateException("no table of up to 2^28 slots places " + windows.size() + " windows");
            }
            for (final long multiplier : MULTIPLIERS) {
                final Table t = new Table(capacity, multiplier, all);
                if (placeAll(t, windows)) {
                    return t;
                }
            }
        }
    }

    private static boolean placeAll(final Table t, final java.util.Map<Long, Chunk[]> windows) {
        for (final java.util.Map.Entry<Long, Chunk[]> e : windows.entrySet()) {
            final long key = e.getKey();
            final int h = t.slot(key);
            final int i = t.keys[h] == NO_KEY ? h : t.keys[h + 1] == NO_KEY ? h + 1 : -1;
            if (i < 0) {
                return false;
            }
            Chunk lo = e.getValue()[0];
            Chunk hi = e.getValue()[1];
            if (hi == null) {
                hi = lo;
            } else if (hi.base < lo.base) {
                final Chunk x = lo;
                lo = hi;
                hi = x;
            }
            t.keys[i] = key;
            t.chunks[2 * i] = lo;
            t.chunks[2 * i + 1] = hi;
            t.bounds[i] = hi == lo ? 0 : hi.base;
        }
        return true;
    }
}
