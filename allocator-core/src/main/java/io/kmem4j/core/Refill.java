package io.kmem4j.core;

/**
 * The allocation slow path: a platform thread's loaded magazine is empty. Tiers, cheapest first,
 * each a named method (Netty's habit: the algorithm on the first screen):
 *
 * <pre>
 *   1 fromRemoteFrees  frees other threads sent me, and orphans      one swap each, no lock
 *   2 fromPrevious     my previous magazine                          swap, no lock
 *   3 fromFrozenSlab   my frozen slab's bitmap, lowest addresses      no lock (only I write it)
 *   4 fromDepot        a full magazine for my empty one               cache lock
 *   5 fromSharedSlabs  a few objects of the lowest shared slab, while I am new to this class (cache lock)
 *   6 fromNewSlab      freeze a partial, an empty, or a new slab      cache lock
 *   7 grow             first help the JDK run the cleaners GC found (ReferenceProcessing),
 *                      take other classes' empty slabs, empty the caches of threads that ended,
 *                      then take back other caches' empty slabs,
 *                      past the mark, a collection first (CollectBeforeGrowing),
 *                      then one more chunk from the JDK's budget      no cache lock; may fail at once
 *   8 underPressure    no chunk fits: the JDK's path serves it when it fits there; else give my
 *                      caches back, trim, and reclaim as the JDK's Bits would (AtTheLimit: reference
 *                      processing, one shared System.gc, ~0.5 s back-off), trying again each step,
 *                      taking in the frees GC sent to other threads too
 *   9 (0 returned)     the JDK's own allocateDirect serves the request
 * </pre>
 *
 * Refills from slabs take their lowest free addresses and partial slabs are taken lowest address
 * first, so a thread's consecutive allocations ascend in address and slabs empty out (the
 * address-ordered policy of Wilson et al., "Dynamic Storage Allocation: A Survey and Critical
 * Review", 1995, against the scattering of LIFO freelists). A thread freezes a slab of its own
 * only after {@link #FREEZE_AFTER_ALLOCATIONS} allocations of a class, so a thousand threads
 * holding one buffer each do not freeze a thousand slabs.
 *
 * <p>Threads: the owner of {@code tc} only, with {@code tc.busy} set for the duration (a re-entrant
 * allocation, e.g. from a JFR event's own buffers, goes to the JDK).
 */
final class Refill {
    /** A thread freezes a slab of a class of its own only after this many allocations from it. */
    static final long FREEZE_AFTER_ALLOCATIONS = 256;
    /** Objects a thread new to a class takes per refill from the shared slabs, at most. */
    static final int SHARED_REFILL = 8;
    /**
     * Bytes a thread new to a class takes per refill from the shared slabs, at most (one object at
     * least): what it holds beyond the one it asked for stays in its magazine, so eight 64 KiB objects
     * per refill made a thousand threads holding one 64 KiB buffer each reserve 525 MB for 66 MB live,
     * and run into a limit the JDK's allocator met with room to spare (new-user trial).
     */
    static final int SHARED_REFILL_BYTES = 4096;

    private final SlabCache[] caches;
    private final PageHeap pages;
    private final RemoteFrees remote;
    private final Reaper reaper;
    private final Accounting accounting;
    private final CollectBeforeGrowing collector;

    Refill(final SlabCache[] caches, final PageHeap pages, final RemoteFrees remote, final Reaper reaper,
           final Accounting accounting, final CollectBeforeGrowing collector) {
        this.collector = collector;
        this.caches = caches;
        this.pages = pages;
        this.remote = remote;
        this.reaper = reaper;
        this.accounting = accounting;
    }

    /**
     * @return an object of class {@code cls} now owned by the caller (popped from its loaded
     *         magazine, which therefore has room for it again), or 0: the JDK serves the request
     */
    long allocate(final ThreadCache tc, final int cls) {
        tc.busy = true;
        try {
            tc.magazines(cls);
            final long a = fromMine(tc, cls);
            if (a != 0) {
                return a;
            }
            try {
                return OutOfLine.fromSlabs(this, tc, cls, true);
            } catch (final OutOfMemoryError budgetExhausted) {
                return underPressure(tc, cls);
            } catch (final SlabCache.RetiredException closedMeanwhile) {
                return 0; // the allocator closed after this call checked: the JDK serves it
            }
        } catch (final Throwable unexpected) {
            if (Debug.ON && unexpected instanceof IllegalStateException) {
                throw (IllegalStateException) unexpected; // a broken invariant must surface in debug mode
            }
            accounting.allocationFailures.increment(); // e.g. a heap OutOfMemoryError: the JDK serves this one
            return 0;
        } finally {
            tc.busy = false;
        }
    }

    /** Tiers 1 and 2: what is mine without a lock. */
    private long fromMine(final ThreadCache tc, final int cls) {
        final long a = fromRemoteFrees(tc, cls);
        return a != 0 ? a : fromPrevious(tc, cls);
    }

    /** Tier 1: sends my pending batches, takes in what others sent me; pops the loaded magazine if that filled it. */
    private long fromRemoteFrees(final ThreadCache tc, final int cls) {
        tc.flushOutgoing();
        remote.drain(tc);
        final Magazine m = tc.loaded[cls];
        return m.isEmpty() ? 0 : m.pop();
    }

    /** Tier 2: the previous magazine, swapped with the empty loaded one. */
    private static long fromPrevious(final ThreadCache tc, final int cls) {
        return tc.popPrevious(cls);
    }

    /**
     * Tiers 3 to 7: frozen slab, depot, shared slabs, a new frozen slab; growing the page heap
     * (without the cache lock: growing may run GC) and looking again, when {@code mayGrow}.
     *
     * @throws OutOfMemoryError when a new chunk cannot be reserved, or growing is not allowed
     * @throws SlabCache.RetiredException when the allocator closed meanwhile
     */
    long fromSlabs(final ThreadCache tc, final int cls, final boolean mayGrow) {
        final long frozen = fromFrozenSlab(tc, cls);
        if (frozen != 0) {
            return frozen;
        }
        final SlabCache c = caches[cls];
        boolean helped = false;
        boolean tookEmpties = false;
        boolean retiredEnded = false;
        boolean collected = false;
        for (;;) {
            final Chunk[] seen = pages.snapshot();
            c.lock.lock();
            try {
                long a = fromDepot(tc, cls, c);
                if (a == 0) {
                    a = fromSharedSlabs(tc, cls, c);
                }
                if (a == 0) {
                    a = fromNewSlab(tc, cls, c);
                }
                if (a != 0) {
                    return a;
                }
            } finally {
                c.lock.unlock();
            }
            if (!mayGrow) {
                throw new OutOfMemoryError("kmem4j: no free slab and growing is not allowed now");
            }
            if (!helped && ReferenceProcessing.help(tc)) {
                helped = true; // buffers GC found came back before the heap grows: take them in, look again
                final long a = fromGcFrees(tc, cls);
                if (a != 0) {
                    return a;
                }
                continue;
            }
            if (!tookEmpties) {
                tookEmpties = true; // once per miss: others may keep emptying slabs meanwhile
                if (reaper.releaseEmptySlabs(0, c) > 0) {
                    continue; // another size class kept empty slabs: carve from their pages before growing
                }
            }
            if (!retiredEnded && tc.kind == ThreadCache.CACHING) {
                retiredEnded = true;
                if (reaper.retireEnded() > 0) {
                    continue; // threads that ended held slabs: take from those before growing
                }
            }
            if (!collected && collector.collect(tc)) {
                collected = true; // buffers the program dropped came back before the heap grows: take them in, look again
                final long a = fromGcFrees(tc, cls);
                if (a != 0) {
                    return a;
                }
                continue;
            }
            pages.grow(seen);
        }
    }

    /** Tier 1 after a collection: the last of its frees may wait in the GC cleaner thread's batches. */
    private long fromGcFrees(final ThreadCache tc, final int cls) {
        reaper.flushGcBatches();
        return fromRemoteFrees(tc, cls);
    }

    /** Tier 3: my frozen slab (only I take from its bitmap: no lock). */
    private static long fromFrozenSlab(final ThreadCache tc, final int cls) {
        final Slab frozen = tc.current[cls];
        if (frozen == null || frozen.freeObjects() == 0) {
            return 0;
        }
        final Magazine m = tc.loaded[cls];
        OutOfLine.fill(frozen, m, m.rounds.length);
        return m.pop();
    }

    /** Tier 4 (cache lock held): my empty previous magazine for a full one; the empty loaded one becomes previous. */
    private static long fromDepot(final ThreadCache tc, final int cls, final SlabCache c) {
        final Magazine full = c.depot.exchangeForFull(tc.previous[cls]);
        if (full == null) {
            return 0;
        }
        tc.previous[cls] = tc.loaded[cls];
        tc.loaded[cls] = full;
        return full.pop();
    }

    /** Tier 5 (cache lock held): a thread new to this class shares slabs instead of freezing one of its own. */
    private static long fromSharedSlabs(final ThreadCache tc, final int cls, final SlabCache c) {
        if (tc.current[cls] != null
            || tc.stats[ThreadCache.classBase(cls) + ThreadCache.ALLOCS] >= FREEZE_AFTER_ALLOCATIONS) {
            return 0;
        }
        final Magazine m = tc.loaded[cls];
        return OutOfLine.fillSharedLocked(c, m, sharedRefill(c.objectSize)) > 0 ? m.pop() : 0;
    }

    /** @return objects per refill from the shared slabs for objects of {@code objectSize} bytes: 1 to 8 */
    static int sharedRefill(final int objectSize) {
        return Math.max(1, Math.min(SHARED_REFILL, SHARED_REFILL_BYTES / objectSize));
    }

    /** Tier 6 (cache lock held): unfreezes my used-up slab and freezes another; 0 when the page heap must grow. */
    private static long fromNewSlab(final ThreadCache tc, final int cls, final SlabCache c) {
        Slab s = tc.current[cls];
        if (s == null || s.freeObjects() == 0) {
            if (s != null) {
                tc.current[cls] = null;
                c.unfreezeLocked(s);
            }
            s = c.freezeSlabLocked(tc);
            tc.current[cls] = s;
        }
        if (s == null) {
            return 0;
        }
        final Magazine m = tc.loaded[cls];
        OutOfLine.fill(s, m, m.rounds.length);
        return m.pop();
    }

    /**
     * Tier 8: no chunk fits under {@code MaxDirectMemorySize} now (growth never waits). When the JDK's
     * path can serve the request without reclaiming (it fits there: a chunk is larger than what is
     * left), it does, at once: a small limit must not make every request slow. Otherwise give back
     * what kmem4j caches (this thread's magazines of every class, depots, empty slabs and chunks: far
     * cheaper than a collection) and reclaim as the JDK would ({@link AtTheLimit}: reference
     * processing, one shared collection, a back-off of about 0.5 s), trying again after each step.
     */
    private long underPressure(final ThreadCache tc, final int cls) {
        long a = fromMine(tc, cls);
        if (a != 0) {
            return a;
        }
        final int size = caches[cls].objectSize;
        if (pages.chunkCount() == 0 || JdkInternals.fitsUnderTheLimit(size)) {
            return 0; // the JDK's path serves this one without a collection, so no reclaiming here either
        }
        final Events.BudgetPressure event = Events.recorder() ? new Events.BudgetPressure() : null;
        if (event != null) {
            event.begin();
            event.cache = caches[cls].name;
        }
        try {
            final long released = reaper.relieve(tc, false);
            a = AtTheLimit.reclaim(tc, size, () -> again(tc, cls), () -> reaper.relieve(tc, false));
            if (event != null) {
                event.releasedBytes = released;
                event.recovered = a != 0;
            }
            return a;
        } finally {
            if (event != null) {
                event.commit();
            }
        }
    }

    /** One more try once memory may have come back: frees sent to me, then to anyone, my previous magazine, the slabs, a chunk if one fits now. */
    private long again(final ThreadCache tc, final int cls) {
        reaper.flushGcBatches(); // what the collection freed and the GC cleaner thread still batches
        long a = fromMine(tc, cls);
        if (a != 0) {
            return a;
        }
        // what GC sent to threads that are not asking now
        if (remote.takeFromOthers(tc, cls, Integer.MAX_VALUE, object -> tc.keep(cls, object)) > 0) {
            a = fromMine(tc, cls);
            if (a != 0) {
                return a;
            }
        }
        try {
            return OutOfLine.fromSlabs(this, tc, cls, true);
        } catch (final OutOfMemoryError | SlabCache.RetiredException stillFullOrClosed) {
            return 0;
        }
    }
}
