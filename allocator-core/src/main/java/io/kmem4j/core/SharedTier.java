package io.kmem4j.core;

import java.nio.ByteBuffer;

/**
 * Virtual threads: served from their carrier's magazines (JDK 21+, {@link Carriers}), which a
 * virtual thread borrows for one pop or push ({@link ThreadCache#borrow()}: one CAS) and never waits
 * on, and otherwise, or on a miss the depot cannot refill without waiting, one object at a time from
 * the cache's shared magazine under the cache's lock (refilled from the depot or the lowest shared
 * slab). A million virtual threads never make a million thread caches: the carriers' are enough.
 *
 * <p>Why the borrow: a virtual thread may unmount in the middle of a carrier operation even though
 * nothing there parks: JDK 26 lets one that waits for another thread's class initialization unmount
 * (JDK-8369238), and it then goes on, with the first carrier's cache, on another carrier, while a
 * second virtual thread takes over the first carrier. Without the borrow both popped one magazine
 * (an {@code ArrayIndexOutOfBoundsException} in CI on JDK 27, so the same object could have been
 * handed out twice); with it, the second one uses the shared tier until the first is done.
 *
 * <p>Threads: any thread whose cache is {@link ThreadRegistry#shared}; statistics are counted
 * atomically on that shared cache.
 */
final class SharedTier {
    private final SlabCache[] caches;
    private final SizeClasses classes;
    private final PageHeap pages;
    private final RemoteFrees remote;
    private final ThreadRegistry registry;
    private final BufferFactory buffers;
    private final Accounting accounting;
    private final boolean zeroOnFree;

    private final Reaper reaper;
    private final CollectBeforeGrowing collector;

    SharedTier(final SlabCache[] caches, final SizeClasses classes, final PageHeap pages, final RemoteFrees remote,
               final ThreadRegistry registry, final Reaper reaper, final BufferFactory buffers,
               final Accounting accounting, final CollectBeforeGrowing collector, final boolean zeroOnFree) {
        this.collector = collector;
        this.zeroOnFree = zeroOnFree;
        this.reaper = reaper;
        this.caches = caches;
        this.classes = classes;
        this.pages = pages;
        this.remote = remote;
        this.registry = registry;
        this.buffers = buffers;
        this.accounting = accounting;
    }

    /**
     * A virtual thread's allocation: a pop from its carrier's loaded magazine when it has a round (a
     * hit, counted on the carrier's cache), refilled from the depot or a shared slab when the cache
     * lock is free at once (never waiting: a virtual thread must not block while it holds its
     * carrier's magazines); else the shared tier.
     *
     * @return a buffer, or {@code null} when the JDK serves this request (counted as a fallback)
     */
    private ByteBuffer allocateVirtual(final ThreadCache tc, final int capacity, final boolean tracked) {
        return allocateOnCarrier(tc, registry.carrierCache(), capacity, tracked);
    }

    /** {@link #allocateVirtual} with the carrier's cache given ({@code null}: none); package-private for tests. */
    ByteBuffer allocateOnCarrier(final ThreadCache tc, final ThreadCache carrier, final int capacity, final boolean tracked) {
        if (carrier != null && !carrier.busy && carrier.borrow()) {
            final int cls = classes.indexOf(capacity);
            final boolean miss;
            final long address;
            try {
                final Magazine m = carrier.loaded[cls];
                miss = m.isEmpty();
                address = miss ? refillWithoutWaiting(carrier, cls) : m.pop();
                if (address != 0) {
                    carrier.countAllocation(cls, address, capacity, miss);
                }
            } finally {
                carrier.endBorrow();
            }
            if (address != 0) {
                try {
                    return buffers.newBuffer(tc, address, capacity, tracked);
                } catch (final Throwable t) {
                    // building may have blocked and moved this thread: undo on the shared cache, atomically
                    final int base = ThreadCache.classBase(cls);
                    tc.count(base + ThreadCache.ALLOCS, -1);
                    if (miss) {
                        tc.count(base + ThreadCache.MISSES, -1);
                    }
                    tc.count(ThreadCache.ALLOC_BYTES, -capacity);
                    remote.orphanMt(tc, address); // the block comes back through the orphans, never lost
                    return accounting.failed(capacity);
                }
            }
        }
        return allocateShared(tc, capacity, tracked);
    }

    /** A carrier's loaded magazine is empty: the depot's full one or a few shared objects, if the lock is free now. */
    private long refillWithoutWaiting(final ThreadCache carrier, final int cls) {
        if (!carrier.magazinesWithoutThrowing(cls)) {
            return 0; // heap exhausted: the shared tier decides
        }
        remote.drainWithoutWaiting(carrier);
        final Magazine loaded = carrier.loaded[cls];
        if (!loaded.isEmpty()) {
            return loaded.pop();
        }
        final long previous = carrier.popPrevious(cls);
        if (previous != 0) {
            return previous;
        }
        final SlabCache c = carrier.cache(cls);
        if (!c.lock.tryLock()) {
            return 0;
        }
        try {
            final Magazine full = c.depot.exchangeForFull(carrier.previous[cls]);
            if (full != null) {
                carrier.previous[cls] = carrier.loaded[cls];
                carrier.loaded[cls] = full;
                return full.pop();
            }
            final Magazine m = carrier.loaded[cls];
            return OutOfLine.fillSharedLocked(c, m, m.rounds.length) > 0 ? m.pop() : 0; // a new slab: a CAS, never a wait
        } catch (final RuntimeException | OutOfMemoryError e) {
            return 0; // retired cache, heap exhausted: the shared tier decides
        } finally {
            c.lock.unlock();
        }
    }

    /**
     * A virtual thread's release of an object whose slab has no owner or is its carrier's: a push onto
     * the carrier's loaded magazine, or a swap with an empty previous one (no lock).
     *
     * @return true when the object was kept; false: the caller defers it as before
     */
    boolean freeVirtual(final int cls, final long address, final int capacity, final int owner) {
        return freeOnCarrier(registry.carrierCache(), cls, address, capacity, owner);
    }

    /** {@link #freeVirtual} with the carrier's cache given ({@code null}: none); package-private for tests. */
    boolean freeOnCarrier(final ThreadCache carrier, final int cls, final long address, final int capacity, final int owner) {
        if (carrier == null || carrier.busy || (owner != 0 && owner != carrier.id)) {
            return false;
        }
        if (zeroOnFree) {
            Zeroing.zero(address, capacity); // the object is still the caller's
        }
        if (!carrier.borrow()) {
            return false;
        }
        try {
            if (!carrier.keepWithoutWaiting(cls, address) && !spillWithoutWaiting(carrier, cls, address)) {
                return false;
            }
            carrier.countFree(cls, capacity);
            return true;
        } finally {
            carrier.endBorrow();
        }
    }

    /** Both of a carrier's magazines are full: trade the previous one for an empty one of the depot, if the lock is free now. */
    private static boolean spillWithoutWaiting(final ThreadCache carrier, final int cls, final long address) {
        if (!carrier.magazinesWithoutThrowing(cls)) {
            return false; // (keepWithoutWaiting found none and the heap had no room for them)
        }
        final SlabCache c = carrier.cache(cls);
        if (!c.lock.tryLock()) {
            return false;
        }
        final Magazine e;
        try {
            e = c.depot.exchangeForEmpty(carrier.previous[cls]);
        } catch (final OutOfMemoryError heapExhausted) {
            return false;
        } finally {
            c.lock.unlock();
        }
        if (e == null) {
            return false; // the depot is at its limit: the free is deferred, and flushed to slabs by someone who may wait
        }
        carrier.previous[cls] = carrier.loaded[cls];
        carrier.loaded[cls] = e;
        e.push(address);
        return true;
    }

    /**
     * @param tc the calling thread's cache: {@link ThreadRegistry#virtual} (a virtual thread:
     *           {@link #allocateVirtual}) or another shared one
     * @return a buffer, or {@code null} when the JDK serves this request (counted as a fallback)
     */
    ByteBuffer allocate(final ThreadCache tc, final int capacity, final boolean tracked) {
        return tc == registry.virtual ? allocateVirtual(tc, capacity, tracked) : allocateShared(tc, capacity, tracked);
    }

    /** One object under the cache lock; at the limit, reclaimed as the JDK would ({@link AtTheLimit}). */
    private ByteBuffer allocateShared(final ThreadCache tc, final int capacity, final boolean tracked) {
        final int cls = classes.indexOf(capacity);
        final SlabCache c = caches[cls];
        long address;
        try {
            address = takeOrGrow(c);
        } catch (final SlabCache.RetiredException closed) {
            return accounting.fallback(capacity, "closed");
        } catch (final OutOfMemoryError budgetExhausted) {
            address = underPressure(tc, c);
            if (address == 0) {
                return accounting.fallback(capacity, "budget exhausted"); // the JDK's path serves it (it fits there, or it throws its own error)
            }
        }
        final ByteBuffer b;
        try {
            b = buffers.newBuffer(tc, address, capacity, tracked);
        } catch (final Throwable t) {
            giveBack(c, tc, address);
            return accounting.failed(capacity);
        }
        final int base = ThreadCache.classBase(cls);
        tc.count(base + ThreadCache.ALLOCS, 1);
        tc.count(base + ThreadCache.MISSES, 1);
        tc.count(ThreadCache.ALLOC_BYTES, capacity);
        return b;
    }

    /**
     * One object of {@code c}: the cache's shared magazine or slabs, the orphans, other classes' empty
     * slabs, a new chunk.
     *
     * @throws OutOfMemoryError when no chunk fits under the limit
     * @throws SlabCache.RetiredException when the allocator closed meanwhile
     */
    private long takeOrGrow(final SlabCache c) {
        boolean tookEmpties = false;
        boolean collected = false;
        for (;;) {
            final Chunk[] seen = pages.snapshot();
            final long address;
            c.lock.lock();
            try {
                address = c.takeOneLocked();
            } finally {
                c.lock.unlock();
            }
            if (address != 0) {
                return address;
            }
            if (remote.orphans.nonEmpty()) {
                remote.returnOrphans(registry.reaper); // frees deferred by virtual threads and GC: reuse them before growing
                continue;
            }
            if (!tookEmpties) {
                tookEmpties = true; // once per request
                if (reaper.releaseEmptySlabs(0, c) > 0) {
                    continue; // another size class kept empty slabs: carve from their pages before growing
                }
            }
            if (!collected && collector.collect(null)) {
                collected = true; // what the program dropped came back (to the orphans, or to its owners)
                continue;
            }
            pages.grow(seen); // no lock held
        }
    }

    /** No chunk fits: as {@link Refill}'s tier 8, with the shared cache (nothing of the caller's own to give back). */
    private long underPressure(final ThreadCache tc, final SlabCache c) {
        if (pages.chunkCount() == 0 || JdkInternals.fitsUnderTheLimit(c.objectSize)) {
            return 0;
        }
        reaper.relieve(tc, false);
        final long[] fromOthers = new long[1];
        return AtTheLimit.reclaim(tc, c.objectSize, () -> {
            try {
                return takeOrGrow(c);
            } catch (final OutOfMemoryError | SlabCache.RetiredException stillFullOrClosed) {
                // one of the frees GC sent to a platform thread that is not asking now (RemoteFrees.takeFromOthers),
                // the last of them handed over from the GC cleaner thread's batches first
                reaper.flushGcBatches();
                return remote.takeFromOthers(tc, c.classIndex, 1, object -> fromOthers[0] = object) == 1 ? fromOthers[0] : 0;
            }
        }, () -> reaper.relieve(tc, false));
    }

    /** A failed build: the block goes back on top of the cache's shared magazine. */
    private void giveBack(final SlabCache c, final ThreadCache tc, final long address) {
        try {
            c.lock.lock();
            try {
                c.untakeOneLocked(address, tc);
            } finally {
                c.lock.unlock();
            }
        } catch (final Throwable heapExhausted) {
            remote.orphanMt(tc, address); // allocation-free; counted as a deferred free, never lost
        }
    }
}
