package io.kmem4j.core;

import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A cache ({@code kmem_cache} analogue): all objects of one size class. It owns a {@link Depot} of
 * full and empty magazines, a partial list of slabs ordered by address, a list of empty slabs
 * ordered by address, the shared magazine of threads without a private cache, and the slow-path
 * statistics.
 *
 * <pre>
 *   thread caches ──magazine exchange──▶ depot: full[] / empty[]      (lock)
 *                 ──refill (frozen slab, no lock)──┐
 *   partial list (lowest address first) ◀──────────┴── empty list (lowest first) ◀── new slab from PageHeap
 * </pre>
 *
 * <p>Empty slabs stay in their cache, as SLUB keeps empty slabs on its partial lists up to
 * {@code min_partial}: GC gives dropped buffers back in bursts that empty hundreds of slabs at once,
 * and the next allocations need them again. Giving each back to the page heap and carving it anew
 * cost the GC-only ring at 4 KiB most of its time (a scan of the chunks for a free run, a new slab,
 * zeroing every object again although zero-on-free had left them zero). The page heap gets them
 * back when it would otherwise grow ({@link Reaper#releaseEmptySlabs}), on trim and budget
 * pressure, and from the reaper once the heap has not grown for a while.
 *
 * <p>Lock: one {@link ReentrantLock} per cache, never a global one. It protects the depot, the
 * partial list, the empty list, the shared magazine, and the bitmap and counters word of every slab of
 * this cache that is not frozen. Lock order: a cache lock, then {@link PageHeap}'s grow lock; never
 * two cache locks. Remote pushes (lock-free) may happen under the lock.
 */
final class SlabCache {
    final int id;
    final int classIndex;
    final int objectSize;
    /** Rounds of every magazine of this cache: {@link #magazineRounds(int, int)}. */
    final int magazineRounds;
    final int slabPages;
    final int objectsPerSlab;
    /**
     * {@code ceil(2^INDEX_SHIFT / objectSize)}: {@code offset / objectSize == (offset * indexMagic) >>> INDEX_SHIFT}
     * for every offset inside a slab (below 2^22, a slab being at most 64 pages of 64 KiB) and every
     * object size up to 2^20 (Granlund and Montgomery's division by invariant integers): the slab index
     * of an object without a division on the allocation path.
     */
    final long indexMagic;
    /** Objects wait all-zero (zero-on-free): a slab zeroes an object the first time it hands it out. */
    final boolean zeroOnFree;
    static final int INDEX_SHIFT = 42;
    final String name;
    final ReentrantLock lock = new ReentrantLock();

    final Depot depot;
    private final PageHeap pages;
    private final TreeSet<Slab> partial = new TreeSet<>();
    private final TreeSet<Slab> empty = new TreeSet<>();
    /** {@code empty.size()}, written under the lock, read racily by {@link #emptySlabsHint()}. */
    private int emptyCount;
    /** Rounds for threads without a private cache (virtual threads), used under the lock. */
    private Magazine shared;

    /** Set under the lock when the id was given back; no slab may be created after that. */
    boolean retired;

    // statistics, written under the lock, read racily
    long slabs;
    long slabsCreated;
    long slabsFreed;
    long doubleFrees;

    /**
     * @param classIndex the size class
     * @param objectSize bytes per object
     * @param config     magazine rounds and depot size
     * @param pages      where new slabs come from
     * @param zeroOnFree objects wait all-zero (then a slab zeroes each object on its first hand-out)
     */
    SlabCache(final int classIndex, final int objectSize, final SlabAllocatorConfig config, final PageHeap pages,
              final boolean zeroOnFree) {
        this.pages = pages;
        this.zeroOnFree = zeroOnFree;
        this.classIndex = classIndex;
        this.objectSize = objectSize;
        this.slabPages = SizeClasses.slabPages(objectSize);
        this.objectsPerSlab = (int) Math.min(Counters.MAX_OBJECTS,
            ((long) slabPages * SlabAllocatorConfig.PAGE_SIZE_BYTES) / objectSize);
        this.name = "kmem4j-" + objectSize;
        this.indexMagic = ((1L << INDEX_SHIFT) + objectSize - 1) / objectSize;
        this.magazineRounds = magazineRounds(config.magazineRounds(), objectSize);
        this.depot = new Depot(config.depotMagazines(), magazineRounds);
        this.id = CacheTable.register(this);
    }

    /**
     * Magazine capacity for objects of {@code objectSize} bytes: the configured rounds, at most 8 above
     * 4 KiB and 1 above 128 KiB, so that what a thread's two magazines and a depot pin stays about the
     * same in bytes at every size (Linux SLAB's {@code enable_cpucache()} limits its per-CPU arrays the
     * same way: 8 objects above a page, 1 above 128 KiB). With 32 rounds at 64 KiB a thread pinned
     * 4 MiB per class and a depot 32 MiB.
     *
     * @param configured {@code magazineRounds} of the configuration
     * @param objectSize bytes
     * @return rounds, at least 1
     */
    static int magazineRounds(final int configured, final int objectSize) {
        final int limit = objectSize > 128 * 1024 ? 1 : objectSize > 4096 ? 8 : Integer.MAX_VALUE;
        return Math.max(1, Math.min(configured, limit));
    }

    // ---- slabs (lock held) -------------------------------------------------------------------

    /**
     * Freezes a slab for {@code tc}: the lowest-address partial slab, else the lowest-address empty
     * one, else a new one carved from free pages.
     *
     * @return the slab, or {@code null} when the page heap must grow first (without this lock)
     * @throws RetiredException when the cache was retired (its allocator closed)
     */
    Slab freezeSlabLocked(final ThreadCache tc) {
        Slab s = partial.pollFirst();
        if (s != null) {
            s.onPartial = false;
        } else if ((s = empty.pollFirst()) == null) {
            s = newSlabLocked();
            if (s == null) {
                return null;
            }
        }
        emptyCount = empty.size();
        s.counters(Counters.withFrozen(s.counters(), true));
        s.chunk.ownerRelease(s.headPage, tc.id);
        return s;
    }

    /**
     * @return a new slab, or {@code null} when no free run of pages exists
     * @throws RetiredException when the cache was retired (its allocator closed): the caller
     *         falls back to the JDK
     */
    private Slab newSlabLocked() {
        if (retired) {
            throw new RetiredException(name);
        }
        final Slab s = pages.tryNewSlab(this);
        if (s != null) {
            slabs++;
            slabsCreated++;
        }
        return s;
    }

    /** This cache gave its id back (its allocator closed): the caller falls back to the JDK. */
    static final class RetiredException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        RetiredException(final String cache) {
            super(cache + " is closed");
        }
    }

    /** Unfreezes {@code s} (the owner gives it up): it joins the partial list or is emptied. */
    void unfreezeLocked(final Slab s) {
        if (Debug.ON) {
            s.check();
        }
        s.chunk.ownerRelease(s.headPage, 0);
        s.counters(Counters.withFrozen(s.counters(), false));
        final int inuse = s.inuse();
        if (inuse == 0) {
            emptiedLocked(s);
        } else if (inuse < s.objects) {
            s.onPartial = true;
            partial.add(s);
        }
    }

    /**
     * Returns an object to its slab's bitmap on behalf of {@code me}; an object of a slab frozen by
     * another thread is sent to that thread instead (deferred free: only a slab's owner writes its bitmap).
     */
    void returnObjectLocked(final Slab s, final long address, final ThreadCache me) {
        final int owner = s.chunk.ownerAcquire(s.headPage);
        if (owner != 0 && owner != me.id) {
            OutOfLine.freeRemote(me, owner, address);
            return;
        }
        final boolean wasFull = s.inuse() == s.objects;
        if (!s.putBack(address)) {
            doubleFrees++;
            return;
        }
        if (owner != 0) {
            return; // my own frozen slab: it stays mine
        }
        if (wasFull || s.inuse() == 0) {
            OutOfLine.relistLocked(this, s);
        }
    }

    /**
     * An unfrozen slab that was full, or is now empty, after an object came back: onto the partial
     * list, or from it onto the empty list (called {@link OutOfLine#relistLocked out of line}).
     */
    void relistLocked(final Slab s) {
        if (s.inuse() == 0) {
            emptiedLocked(s);
        } else if (!s.onPartial) {
            s.onPartial = true;
            partial.add(s);
        }
    }

    /**
     * Takes one object for a thread without a private cache: from the shared magazine, refilled
     * from the depot or from the lowest-address slab with free objects (not frozen).
     *
     * @return an object, or 0 when the page heap must grow first (without this lock)
     * @throws RetiredException when the cache was retired (its allocator closed)
     */
    long takeOneLocked() {
        if (shared == null) {
            shared = new Magazine(magazineRounds);
        }
        if (shared.isEmpty()) {
            final Magazine full = depot.exchangeForFull(shared);
            if (full != null) {
                shared = full;
            } else if (OutOfLine.fillSharedLocked(this, shared, shared.rounds.length) == 0) {
                return 0;
            }
        }
        return shared.pop();
    }

    /**
     * Puts back an object {@link #takeOneLocked()} handed out whose buffer could not be built: on top of
     * the shared magazine (the next request gets it), or into its slab when that magazine filled meanwhile.
     */
    void untakeOneLocked(final long address, final ThreadCache me) {
        if (!shared.isFull()) {
            shared.push(address);
        } else {
            returnObjectLocked(pages.slabOf(address, new Chunk[1]), address, me);
        }
    }

    /**
     * Fills {@code m} with up to {@code max} objects from the lowest-address slab with free objects
     * that no thread has frozen (a new one if needed). Used by threads without a private cache and by
     * threads that have allocated little from this class so far, so that a thousand threads holding
     * one buffer each do not freeze a thousand slabs.
     *
     * @return objects moved; 0 when the page heap must grow first (without this lock)
     * @throws RetiredException when the cache was retired (its allocator closed)
     */
    int fillSharedLocked(final Magazine m, final int max) {
        Slab s = partial.isEmpty() ? null : partial.first();
        if (s == null && (s = empty.pollFirst()) == null) {
            s = newSlabLocked();
            if (s == null) {
                return 0;
            }
        }
        emptyCount = empty.size();
        final int n = OutOfLine.fill(s, m, max);
        if (s.freeObjects() == 0) {
            if (s.onPartial) {
                partial.remove(s);
                s.onPartial = false;
            }
        } else if (!s.onPartial) {
            s.onPartial = true;
            partial.add(s);
        }
        return n;
    }

    /** Flushes every round of {@code m} back to the slabs. */
    void flushLocked(final Magazine m, final ThreadCache me) {
        final Chunk[] hint = new Chunk[1];
        while (!m.isEmpty()) {
            // pop first: if returning throws (heap exhausted), that round is at worst leaked, never
            // left both in the magazine and free in its slab (which would hand it out twice)
            final long a = m.pop();
            returnObjectLocked(pages.slabOf(a, hint), a, me);
        }
    }

    private void emptiedLocked(final Slab s) {
        if (s.onPartial) {
            partial.remove(s);
            s.onPartial = false;
        }
        empty.add(s);
        emptyCount = empty.size();
    }

    private void destroyLocked(final Slab s) {
        slabs--;
        slabsFreed++;
        pages.freeSlab(s);
    }

    /**
     * Gives empty slabs back to the page heap, keeping the {@code keep} lowest-address ones.
     *
     * @return slabs given back
     */
    int releaseEmptySlabsLocked(final int keep) {
        int released = 0;
        while (empty.size() > keep) {
            destroyLocked(empty.pollLast());
            released++;
        }
        emptyCount = empty.size();
        return released;
    }

    /** @return empty slabs this cache keeps (lock held). */
    int emptySlabsLocked() {
        return empty.size();
    }

    /** @return empty slabs this cache keeps, read without the lock (a hint: may be a moment old). */
    int emptySlabsHint() {
        return emptyCount;
    }

    /**
     * Flushes the depot's full magazines back to slabs and gives every empty slab back to the page heap (part of trim).
     *
     * @param me the thread cache acting (its id decides which frozen slabs may be written)
     */
    void shrinkLocked(final ThreadCache me) {
        if (shared != null) {
            flushLocked(shared, me);
        }
        Magazine m;
        while ((m = depot.pollFull()) != null) {
            flushLocked(m, me);
            depot.keepEmpty(m);
        }
        releaseEmptySlabsLocked(0);
    }

    /** @return objects held by the cache itself: depot and shared magazine (lock held). */
    long heldObjectsLocked() {
        return depot.objects() + (shared == null ? 0 : shared.count);
    }

    int partialSlabsLocked() {
        return partial.size();
    }

    /** Releases this cache's id once it has no slab left; called when its allocator closes. */
    boolean retireIfEmpty() {
        lock.lock();
        try {
            if (slabs == 0 && !retired) {
                retired = true;
                CacheTable.release(id);
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }
}
