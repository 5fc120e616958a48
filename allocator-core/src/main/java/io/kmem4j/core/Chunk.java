package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.UnsafeApi;

/**
 * A chunk: one block of off-heap memory taken from the JDK ({@code Unsafe.allocateMemory}, counted
 * against {@code MaxDirectMemorySize} through {@code java.nio.Bits}, case C2), cut into 64 KiB
 * pages. Slabs are power-of-two runs of pages, aligned to their own size inside the chunk.
 *
 * <pre>
 *  raw ──pad──▶ base                                                          base + size
 *               ┌────────┬────────┬────────┬────────┬────────┬─ ─ ─┬────────┐
 *               │ page 0 │ page 1 │ page 2 │ page 3 │ page 4 │     │ page n │
 *               └────────┴────────┴────────┴────────┴────────┴─ ─ ─┴────────┘
 *               │ slab (2 pages)  │ slab   │ free   │ slab (4 pages) ...
 *  per page:    head[p]   = first page of the slab covering p
 *  per head:    counters[h] (see {@link Counters}), owner[h] (thread cache id, 0 = none), slabs[h]
 * </pre>
 *
 * <p>Address to slab is arithmetic: {@code page = (addr - base) >>> 16}, {@code h = head[page]}.
 * Page runs are taken and returned with a CAS on the page bitmap (no lock). {@code counters} and
 * {@code slabs} of a slab are written under its cache's lock or by the thread that has the slab
 * frozen; {@code owner} is written under the cache's lock with release semantics and read by any
 * thread with acquire semantics.
 */
final class Chunk {
    static final int PAGE_SHIFT = 16;
    private static final VarHandle OWNER = MethodHandles.arrayElementVarHandle(int[].class);
    /** Each chunk is reserved this much larger, to start on an aligned address. */
    static final long ALIGN = 4096;

    final long raw;
    final long reservedBytes;
    final long base;
    final long size;
    final int pages;
    final int[] head;
    final long[] counters;
    final int[] owner;
    final Slab[] slabs;
    private final AtomicLongArray pageBits;
    private final AtomicInteger usedPages = new AtomicInteger();
    /** When the chunk last became empty ({@link System#nanoTime()}); read by the page heap's decay. */
    volatile long emptySinceNanos = System.nanoTime();

    private Chunk(final long raw, final long reservedBytes, final int pages) {
        this.raw = raw;
        this.reservedBytes = reservedBytes;
        this.base = (raw + ALIGN - 1) & -ALIGN;
        this.pages = pages;
        this.size = (long) pages << PAGE_SHIFT;
        this.head = new int[pages];
        this.counters = new long[pages];
        this.owner = new int[pages];
        this.slabs = new Slab[pages];
        final int words = (pages + 63) >>> 6;
        this.pageBits = new AtomicLongArray(words);
        pageBits.set(words - 1, emptyWord(words - 1)); // pages past the end are never free
    }

    /**
     * Takes {@code chunkBytes} (plus 4 KiB alignment pad) from the JDK's direct-memory budget, if it
     * fits now (no GC, no waiting).
     *
     * @throws OutOfMemoryError when it does not fit under {@code MaxDirectMemorySize}, or the memory
     *         cannot be allocated
     */
    static Chunk allocate(final int chunkBytes) {
        final long bytes = chunkBytes + ALIGN;
        if (!JdkInternals.tryReserveDirectMemory(bytes)) {
            throw new OutOfMemoryError("kmem4j: a chunk of " + bytes + " bytes does not fit under MaxDirectMemorySize now");
        }
        final long raw;
        try {
            raw = UnsafeApi.allocateMemory(bytes);
        } catch (final Throwable t) {
            JdkInternals.unreserveDirectMemory(bytes);
            throw t;
        }
        return new Chunk(raw, bytes, chunkBytes >>> PAGE_SHIFT);
    }

    /** A chunk's description over no memory at all, at {@code raw} (tests of the address map: never touched, never released). */
    static Chunk describing(final long raw, final int chunkBytes) {
        return new Chunk(raw, chunkBytes + ALIGN, chunkBytes >>> PAGE_SHIFT);
    }

    /** Returns the memory to the operating system and the JDK's budget. The chunk must be empty. */
    void release() {
        UnsafeApi.freeMemory(raw);
        JdkInternals.unreserveDirectMemory(reservedBytes);
    }

    boolean contains(final long address) {
        return address >= base && address - base < size;
    }

    int pageOf(final long address) {
        return (int) ((address - base) >>> PAGE_SHIFT);
    }

    long pageAddress(final int page) {
        return base + ((long) page << PAGE_SHIFT);
    }

    /**
     * @return the cache of the slab holding {@code address}: one load of the slab's counters word and
     *         one of the cache table (the cache id never changes while the slab exists, and a caller
     *         holding an object of the slab keeps it from being freed, so no lock is needed)
     */
    SlabCache cacheOf(final long address) {
        return CacheTable.get(Counters.cacheId(counters[head[pageOf(address)]]));
    }

    int ownerAcquire(final int headPage) {
        return (int) OWNER.getAcquire(owner, headPage);
    }

    void ownerRelease(final int headPage, final int threadCacheId) {
        OWNER.setRelease(owner, headPage, threadCacheId);
    }

    int usedPages() {
        return usedPages.get();
    }

    /**
     * Takes a run of {@code n} pages aligned to {@code n} ({@code n} a power of two, at most 64).
     *
     * @return the first page, or -1 when no such run is free
     */
    int takePages(final int n) {
        final long run = n == 64 ? -1L : (1L << n) - 1;
        for (int w = 0; w < pageBits.length(); w++) {
            for (;;) {
                final long word = pageBits.get(w);
                int pos = -1;
                for (int p = 0; p + n <= 64; p += n) {
                    if ((word & (run << p)) == 0) {
                        pos = p;
                        break;
                    }
                }
                if (pos < 0) {
                    break;
                }
                if (pageBits.compareAndSet(w, word, word | (run << pos))) {
                    usedPages.addAndGet(n);
                    return (w << 6) + pos;
                }
            }
        }
        return -1;
    }

    /**
     * Marks every page taken, if all are free, so that no racing {@link #takePages(int)} can succeed
     * on a chunk about to be released.
     *
     * @return true when sealed; false (nothing changed) when some page was in use
     */
    boolean seal() {
        final int words = pageBits.length();
        for (int w = 0; w < words; w++) {
            if (!pageBits.compareAndSet(w, emptyWord(w), -1L)) {
                for (int u = 0; u < w; u++) {
                    pageBits.set(u, emptyWord(u));
                }
                return false;
            }
        }
        return true;
    }

    /** Undoes a successful {@link #seal()}: the chunk's pages are free again (its removal failed). */
    void unseal() {
        for (int w = 0; w < pageBits.length(); w++) {
            pageBits.set(w, emptyWord(w));
        }
    }

    private long emptyWord(final int w) {
        final int tail = pages & 63;
        return w == pageBits.length() - 1 && tail != 0 ? -1L << tail : 0L;
    }

    /** Returns a run taken with {@link #takePages(int)}. */
    void returnPages(final int first, final int n) {
        final long run = (n == 64 ? -1L : (1L << n) - 1) << (first & 63);
        final int w = first >>> 6;
        for (;;) {
            final long word = pageBits.get(w);
            if (pageBits.compareAndSet(w, word, word & ~run)) {
                usedPages.addAndGet(-n);
                return;
            }
        }
    }
}
