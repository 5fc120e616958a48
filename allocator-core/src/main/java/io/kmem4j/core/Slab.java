package io.kmem4j.core;

/**
 * A slab: a run of pages in a {@link Chunk} cut into {@code objects} objects of one size class.
 * Free space is a bitmap (bit set = object free in the slab); refills take the lowest free
 * addresses first so consecutive allocations ascend in address and slabs stay compact (the
 * address-ordered policy of Wilson et al., "Dynamic Storage Allocation: A Survey and Critical
 * Review", 1995, against the scattering of LIFO freelists). The slab's {@link Counters} word lives in
 * {@code chunk.counters[headPage]}.
 *
 * <p>Ownership: while frozen (some thread's current slab), only that thread changes the bitmap
 * and the counters word; otherwise only a holder of the cache's lock does.
 */
final class Slab implements Comparable<Slab> {
    final Chunk chunk;
    final int headPage;
    final int pages;
    final long base;
    final SlabCache cache;
    final int objects;
    final int objectSize;
    final long[] free;
    /** {@link SlabCache#indexMagic}. */
    private final long indexMagic;
    /**
     * With the owned lifecycle ({@link OwnedLifecycle}): per object, the JDK cleaner of the tracked
     * buffer over it while it is handed out, which this slot keeps reachable (the JDK's list does not);
     * {@code null} otherwise. Written by the thread that hands the object out, cleared by the one
     * release that wins (one CAS: {@link SlotRelease}); no lock (the slot belongs to whoever holds the object).
     */
    final Object[] cleaners;
    /** With the owned lifecycle: per object, the capacity of the tracked buffer over it, bytes. */
    final int[] capacities;
    /** With the owned lifecycle: per object, its release hook, made on its first tracked hand-out ({@link #hook}). */
    private final SlotRelease[] hooks;
    /**
     * Objects from this index on have never been handed out, so they hold whatever the chunk's memory
     * held, never an application's data; with zero-on-free they are zeroed the first time they are
     * handed out ({@link #fill}) instead of the whole chunk when it is taken from the JDK, so memory
     * the application never uses is never touched (it stays out of RSS). Written by whoever fills.
     */
    private int virgin;
    /** Zero-on-free: objects wait all-zero, so the first hand-out of a virgin object must zero it. */
    private final boolean zeroVirgins;
    boolean onPartial;

    Slab(final Chunk chunk, final int headPage, final SlabCache cache) {
        this.chunk = chunk;
        this.headPage = headPage;
        this.pages = cache.slabPages;
        this.base = chunk.pageAddress(headPage);
        this.cache = cache;
        this.objects = cache.objectsPerSlab;
        this.objectSize = cache.objectSize;
        this.free = new long[(objects + 63) >>> 6];
        this.indexMagic = cache.indexMagic;
        this.zeroVirgins = cache.zeroOnFree;
        final boolean owned = OwnedLifecycle.enabled();
        this.cleaners = owned ? new Object[objects] : null;
        this.capacities = owned ? new int[objects] : null;
        this.hooks = owned ? new SlotRelease[objects] : null;
        for (int i = 0; i < objects; i++) {
            free[i >>> 6] |= 1L << i;
        }
    }

    /** @return true when this slab keeps its objects' cleaners (built in the owned lifecycle) */
    boolean keepsCleaners() {
        return hooks != null;
    }

    /**
     * The release hook of object {@code index}, made on first use; only the thread holding the object
     * calls this (with the owned lifecycle: {@link #keepsCleaners()}).
     */
    SlotRelease hook(final int index, final SlabAllocator allocator) {
        SlotRelease h = hooks[index];
        if (h == null) {
            h = new SlotRelease(allocator, this, index);
            hooks[index] = h;
        }
        return h;
    }

    /**
     * The tracked buffer built over object {@code index} has cleaner {@code c} and {@code capacity}
     * bytes: its slot keeps {@code c} reachable until the one release for {@code c} ({@link SlotRelease}).
     * Called by the thread holding the object, before the buffer is published.
     */
    void arm(final int index, final Object c, final int capacity) {
        capacities[index] = capacity;
        // release store: whoever claims c with its CAS also sees the capacity, however the buffer reached it
        SlotRelease.SLOTS.setRelease(cleaners, index, c);
    }

    /** @return the cleaner object {@code index}'s slot keeps now, or {@code null} (tests, diagnostics) */
    Object cleanerAt(final int index) {
        return cleaners == null ? null : cleaners[index];
    }

    long counters() {
        return chunk.counters[headPage];
    }

    void counters(final long word) {
        chunk.counters[headPage] = word;
    }

    int inuse() {
        return Counters.inuse(counters());
    }

    int freeObjects() {
        return objects - inuse();
    }

    boolean frozen() {
        return Counters.frozen(counters());
    }

    /**
     * @return true when {@code address}, an address of kmem4j's memory, lies in this slab and the slab
     *         is still its chunk's slab for that page (not freed and replaced since)
     */
    boolean holds(final long address) {
        return address - base >= 0 && address - base < (long) pages * SlabAllocatorConfig.PAGE_SIZE_BYTES
            && chunk.slabs[chunk.pageOf(address)] == this;
    }

    /** @return the index of the object starting at or containing {@code address} (inside this slab). */
    int indexOf(final long address) {
        return (int) (((address - base) * indexMagic) >>> SlabCache.INDEX_SHIFT);
    }

    /**
     * Moves up to {@code max} of the lowest free objects into {@code m}, lowest on top; with
     * zero-on-free, an object handed out for the first time is zeroed here.
     *
     * @return objects moved
     */
    int fill(final Magazine m, final int max) {
        if (Debug.ON) {
            check();
        }
        final int k = Math.min(max, Math.min(freeObjects(), m.rounds.length - m.count));
        int slot = m.count + k - 1;
        int taken = 0;
        for (int w = 0; w < free.length && taken < k; w++) {
            long bits = free[w];
            while (bits != 0 && taken < k) {
                final int bit = Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                final int index = (w << 6) + bit;
                final long address = base + (long) index * objectSize;
                if (index >= virgin) {
                    virgin = index + 1; // every object at and above virgin is free: ascending takes stay ascending
                    if (zeroVirgins) {
                        Zeroing.zero(address, objectSize); // first hand-out: the chunk's memory was never zeroed
                    }
                }
                m.rounds[slot--] = address;
                taken++;
            }
            free[w] = bits;
        }
        m.count += taken;
        counters(Counters.withInuse(counters(), inuse() + taken));
        return taken;
    }

    /**
     * Returns one object to the bitmap.
     *
     * @return false when the object was already free in the bitmap (a double free)
     */
    boolean putBack(final long address) {
        final int index = indexOf(address);
        final long bit = 1L << index;
        if ((free[index >>> 6] & bit) != 0) {
            return false;
        }
        free[index >>> 6] |= bit;
        counters(Counters.withInuse(counters(), inuse() - 1));
        return true;
    }

    /**
     * Could a buffer of {@code capacity} bytes at {@code address} (inside this slab) be one this slab
     * handed out? It must start an object, its capacity must belong to this slab's size class, and the
     * object must not be free in the bitmap. Any thread may ask, without the lock: the bit of an object
     * handed out stays clear until that very object comes back, so a racy read sees it clear too.
     */
    boolean mayBeHandedOut(final long address, final int capacity, final SizeClasses classes) {
        final long offset = address - base;
        if (offset < 0 || offset >= (long) pages << Chunk.PAGE_SHIFT) {
            return false;
        }
        final long index = (offset * indexMagic) >>> SlabCache.INDEX_SHIFT;
        if (index * objectSize != offset || index >= objects || capacity > objectSize
            || classes.indexOf(capacity) != cache.classIndex) {
            return false;
        }
        return (free[(int) index >>> 6] & (1L << index)) == 0;
    }

    /**
     * Debug check of {@code objects == inuse + free_in_bitmap}.
     *
     * @throws IllegalStateException naming the slab and the figures
     */
    void check() {
        int free = 0;
        for (final long w : this.free) {
            free += Long.bitCount(w);
        }
        if (inuse() + free != objects) {
            throw new IllegalStateException("slab invariant broken: " + this + " free_in_bitmap=" + free);
        }
    }

    @Override
    public int compareTo(final Slab o) {
        return Long.compareUnsigned(base, o.base);
    }

    @Override
    public String toString() {
        return "Slab[" + cache.name + " @0x" + Long.toHexString(base) + " inuse=" + inuse() + "/" + objects + "]";
    }
}
