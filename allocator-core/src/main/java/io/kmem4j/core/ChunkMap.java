package io.kmem4j.core;

/**
 * Membership test from an address to the chunk that holds it, in O(1) and without touching the
 * memory at that address (a foreign address is rejected by looking at our own tables only).
 *
 * <p>The address space is cut into windows of {@code 2^shift} bytes, the largest power of two not
 * above the chunk size, so a window holds parts of at most two chunks (the end of one, the start of
 * the next: a chunk wholly inside a window would be smaller than it) and a chunk touches at most
 * three windows. A two-level radix map (a page map, as tcmalloc's) takes a window number to those
 * two chunks and the address where the second starts: a top array over the span of address space
 * the chunks occupy, of leaves of {@value #LEAF_SIZE} windows each, empty ones shared. Memory: the
 * top array, one reference per {@value #LEAF_SIZE} windows of the span, and 16 KiB per leaf in use
 * (one per chunk at worst, 0.4% of a 4 MiB chunk); an update copies the top array and the leaves it
 * changes.
 *
 * <p>Why this shape: {@link #find} runs inside the allocator's hit and free paths, which C2 compiles,
 * and C2 compiles a branch it has never seen taken as a trap that throws the compiled code away. With
 * a probing hash table, the branch "this slot holds another window" was first taken when the heap
 * grew its second chunk, and threw away every compiled method that had {@code find} inlined (five to
 * seven in the {@code pipeline} sample, each compiled again, larger: JFR
 * {@code jdk.Deoptimization}, {@code unstable_if}). Here the leaf, the entry and the chunk are chosen
 * with arithmetic; the only branches left test whether the address is ours, which for the
 * allocator's own addresses is always true.
 *
 * <p>Threads: {@link #find(long)} may be called by any thread without locking (it reads one
 * immutable table through a volatile field). {@link #add} and {@link #remove} copy what they change
 * and are serialised by the caller's chunk lock.
 */
final class ChunkMap {
    private static final int LEAF_BITS = 10;
    static final int LEAF_SIZE = 1 << LEAF_BITS;

    /** A leaf: per window, the chunk below its bound and the one from it on (the same when one), and the bound. */
    private static final class Leaf {
        final Chunk[] chunks = new Chunk[2 * LEAF_SIZE];
        final long[] bounds = new long[LEAF_SIZE];

        Leaf copy() {
            final Leaf l = new Leaf();
            System.arraycopy(chunks, 0, l.chunks, 0, chunks.length);
            System.arraycopy(bounds, 0, l.bounds, 0, bounds.length);
            return l;
        }
    }

    /** Every window of the span no chunk touches (all {@code null}: {@link #find} answers "not ours"). */
    private static final Leaf EMPTY = new Leaf();

    private static final class Table {
        /** The leaf number of {@code top[0]}. */
        final long topBase;
        final Leaf[] top;
        /** Every chunk, in the order added. */
        final Chunk[] all;

        Table(final long topBase, final Leaf[] top, final Chunk[] all) {
            this.topBase = topBase;
            this.top = top;
            this.all = all;
        }
    }

    /** No chunk at all. */
    private static final Table NONE = new Table(0, new Leaf[0], new Chunk[0]);

    private final int shift;
    private volatile Table table = NONE;

    /** @param chunkBytes the size of every chunk this map will hold (at least one 64 KiB page) */
    ChunkMap(final long chunkBytes) {
        this.shift = 63 - Long.numberOfLeadingZeros(chunkBytes);
    }

    /** @return the chunk holding {@code address}, or {@code null} when the address is not ours. */
    Chunk find(final long address) {
        final Table t = table;
        final long window = address >>> shift;
        final long leaf = (window >>> LEAF_BITS) - t.topBase;
        if (Long.compareUnsigned(leaf, t.top.length) >= 0) {
            return null; // outside the span of every chunk
        }
        final Leaf l = t.top[(int) leaf];
        final int i = (int) window & (LEAF_SIZE - 1);
        final Chunk c = l.chunks[2 * i + (int) ((l.bounds[i] - address - 1) >>> 63)]; // the second from its bound on
        return c != null && c.contains(address) ? c : null;
    }

    /** @return number of chunks registered. */
    int size() {
        return table.all.length;
    }

    /** @throws IllegalStateException when a window would hold parts of three chunks (a chunk not of this map's size); nothing changed */
    void add(final Chunk chunk) {
        final Table t = table;
        final Chunk[] all = java.util.Arrays.copyOf(t.all, t.all.length + 1);
        all[t.all.length] = chunk;
        final long first = (chunk.base >>> shift) >>> LEAF_BITS;
        final long last = ((chunk.base + chunk.size - 1) >>> shift) >>> LEAF_BITS;
        final long base = t.top.length == 0 ? first : Math.min(t.topBase, first);
        final long end = t.top.length == 0 ? last + 1 : Math.max(t.topBase + t.top.length, last + 1);
        final Leaf[] top = new Leaf[Math.toIntExact(end - base)];
        java.util.Arrays.fill(top, EMPTY);
        if (t.top.length > 0) {
            System.arraycopy(t.top, 0, top, (int) (t.topBase - base), t.top.length);
        }
        change(top, base, chunk, true, java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()));
        table = new Table(base, top, all);
    }

    void remove(final Chunk chunk) {
        removeAll(java.util.List.of(chunk));
    }

    /** Removes {@code gone} (those registered) with one copy of what they change. */
    void removeAll(final java.util.Collection<Chunk> gone) {
        final Table t = table;
        final java.util.List<Chunk> rest = new java.util.ArrayList<>(java.util.Arrays.asList(t.all));
        final java.util.List<Chunk> removed = new java.util.ArrayList<>();
        for (final Chunk c : gone) {
            if (rest.remove(c)) {
                removed.add(c);
            }
        }
        if (removed.isEmpty()) {
            return;
        }
        if (rest.isEmpty()) {
            table = NONE;
            return;
        }
        final Leaf[] top = t.top.clone();
        final java.util.Set<Leaf> copies = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (final Chunk c : removed) {
            change(top, t.topBase, c, false, copies);
        }
        table = new Table(t.topBase, top, rest.toArray(new Chunk[0]));
    }

    /** @return a snapshot of the registered chunks. */
    java.util.List<Chunk> chunks() {
        return java.util.List.of(table.all);
    }

    /**
     * Adds or removes {@code chunk}'s windows in {@code top} (a copy, the caller's), each leaf changed
     * copied once ({@code copies}: the leaves already copied by this update, which may change in place).
     */
    private void change(final Leaf[] top, final long base, final Chunk chunk, final boolean add,
                        final java.util.Set<Leaf> copies) {
        for (long w = chunk.base >>> shift; w <= (chunk.base + chunk.size - 1) >>> shift; w++) {
            final int li = (int) ((w >>> LEAF_BITS) - base);
            Leaf l = top[li];
            if (!copies.contains(l)) {
                l = l.copy();
                copies.add(l);
                top[li] = l;
            }
            final int i = (int) w & (LEAF_SIZE - 1);
            final Chunk lo = l.chunks[2 * i];
            final Chunk hi = l.chunks[2 * i + 1];
            if (add) {
                if (lo == null) {
                    l.chunks[2 * i] = chunk;
                    l.chunks[2 * i + 1] = chunk;
                } else if (lo != hi) {
                    throw new IllegalStateException("a window holds parts of three chunks: every chunk must be of this map's size");
                } else {
                    final boolean below = chunk.base < lo.base;
                    l.chunks[2 * i] = below ? chunk : lo;
                    l.chunks[2 * i + 1] = below ? lo : chunk;
                    l.bounds[i] = below ? lo.base : chunk.base;
                }
            } else {
                final Chunk other = lo == chunk ? hi : lo;
                final Chunk left = other == chunk ? null : other;
                l.chunks[2 * i] = left;
                l.chunks[2 * i + 1] = left;
                l.bounds[i] = 0;
            }
        }
    }
}
