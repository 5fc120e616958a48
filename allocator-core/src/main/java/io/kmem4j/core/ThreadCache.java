package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A per-thread cache: for each size class a loaded and a previous {@link Magazine} and the
 * thread's frozen slab; the thread's {@link RemoteInbox}; its outgoing {@link RemoteBatches}; and
 * plain statistics counters. The magazine layer of Bonwick and Adams ("Magazines and Vmem", USENIX
 * 2001) with a thread in the place of a CPU.
 *
 * <pre>
 *   loaded[c]   ─pop/push─▶ the hit paths: one array load and one store, no lock, no atomic
 *   previous[c] ─swap─────▶ exchanged with loaded when loaded is empty (allocate) or full (free)
 *   current[c]  frozen slab: refills take its lowest free objects without a lock
 *   out         batches of frees for other owners (one CAS per batch)
 *   inbox       frees other threads sent to this owner; absorbed on this thread's slow path
 * </pre>
 *
 * <p>Kinds: {@link #CACHING} for platform threads (everything above); {@link #DEFERRING} for the
 * JDK's GC cleaner thread, which must never block: it keeps no magazines, and its frees are batched
 * per owner in {@code out} like a caching thread's, its partial batches handed over by another thread
 * ({@link Reaper#flushGcBatches()}, a revocation it never waits for: meanwhile each of its frees goes
 * to the owner's inbox at once); {@link #SHARED}, one instance for all virtual threads, which allocate
 * under the cache lock and defer their frees (never one cache per virtual thread).
 *
 * <p>Ownership: every field except {@code inbox} is written only by the owning thread (or, for a
 * dead thread, by the reaper after {@code Thread.isAlive()} returned false, which orders it after
 * the thread's last action; or, for an idle live thread, by the reaper during a revocation, see
 * below; or, for the {@link #DEFERRING} cache, {@code out} by whichever thread flushes the GC cleaner
 * thread's batches during such a revocation). Statistics are read racily by the accounting (plain {@code long} reads: a figure may be a
 * moment old, never torn on a 64-bit JVM). The {@link #SHARED} instance updates its statistics
 * atomically.
 *
 * <p>Revocation (an idle live thread's cache emptied by the reaper, {@link Reaper}): the owner's hit
 * paths test {@link #revoked()} (one volatile load) before they touch the magazines, and a hit path
 * is one call into kmem4j from start to end. The reaper sets the word ({@link #beginRevocation()}),
 * then takes the owner's stack ({@code Thread.getStackTrace}: a handshake with that thread on JDK 19+,
 * a global safepoint on 17; either orders the owner's later loads after the reaper's store): when no frame of kmem4j is on it, the
 * owner is between two calls into kmem4j, so its next one sees the word and waits
 * ({@link #resume()}) until the reaper has emptied the cache ({@link #endRevocation}); otherwise
 * the reaper gives up and clears the word. Carriers of virtual threads are never revoked (a
 * mounted virtual thread's frames are not on its carrier's stack).
 */
final class ThreadCache {
    static final int CACHING = 0;
    static final int DEFERRING = 1;
    static final int SHARED = 2;

    // scalar statistics (indices into stats)
    static final int ALLOC_BYTES = 0;
    static final int FREE_BYTES = 1;
    static final int REMOTE_SENT = 2;
    static final int REMOTE_ABSORBED = 3;
    static final int REMOTE_BATCHES = 4;
    /**
     * Frees of buffers GC found, run on this thread because it helped the JDK run pending buffer
     * cleaners before growing ({@link ReferenceProcessing#help}, JDK 26+): GC frees, though not on the
     * cleaner thread. Also counted in the class's {@link #FREES}.
     */
    static final int GC_FREES_HELPED = 5;
    static final int SCALARS = 8;
    // per-class statistics: stats[classBase(c) + k]; one 64-byte line per class. Hits are not
    // counted: hits = ALLOCS - MISSES (misses are counted on the slow path only).
    static final int ALLOCS = 0;
    static final int FREES = 1;
    static final int MISSES = 2;
    static final int ASCENDING = 3;
    static final int CLASS_STRIDE = 8;

    private static final VarHandle STATS = MethodHandles.arrayElementVarHandle(long[].class);

    final int id;
    final Thread thread;
    final int kind;
    final Magazine[] loaded;
    final Magazine[] previous;
    final Slab[] current;
    final long[] lastAddress;
    final long[] stats;
    final RemoteInbox inbox = new RemoteInbox();
    private final RemoteBatches out;
    private final RemoteFrees remote;
    private final SlabCache[] caches;

    /** Re-entrancy guard: set while this thread is inside an allocator slow path. */
    boolean busy;

    /** Set while this ({@link #CACHING}) thread runs the JDK's pending buffer cleaners ({@link #GC_FREES_HELPED}). */
    boolean runningGcCleaners;

    /** Allocations left until the next sampled one (site sampling on). */
    int sampleCountdown;

    /**
     * {@link #DEFERRING} only: the GC cleaner thread whose frees this cache batches (the first one
     * that used it; any other thread's frees are pushed one at a time), or {@code null} before that.
     */
    volatile Thread batchingThread;
    /** {@link #DEFERRING}: its {@link #operations()} when its batches were last flushed (written by the flusher). */
    long opsAtLastFlush;

    private static final VarHandle REVOCATION;
    private static final VarHandle BORROWED;
    private static final VarHandle BATCHING;

    static {
        try {
            REVOCATION = MethodHandles.lookup().findVarHandle(ThreadCache.class, "revocation", int.class);
            BORROWED = MethodHandles.lookup().findVarHandle(ThreadCache.class, "borrowed", int.class);
            BATCHING = MethodHandles.lookup().findVarHandle(ThreadCache.class, "batchingThread", Thread.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #revocation}: the owner uses its cache. */
    static final int OWNED = 0;
    /** {@link #revocation}: the reaper is checking or emptying the cache; the owner waits. */
    static final int REVOKING = 1;
    /** {@link #revocation}: the reaper emptied the cache; the owner takes it back on its next call. */
    static final int REVOKED = 2;
    /**
     * {@link #revocation}: a carrier of virtual threads ({@link #becomeCarrier()}), for good: never
     * revoked, and its owner too, running its own code, uses it only borrowed ({@link #borrow()}), so
     * that a virtual thread that moved in the middle of a borrow (JDK 26+) never shares a magazine with
     * it. Not {@link #OWNED}, so the owner's hit paths see it with the one load they already make.
     */
    static final int CARRIER = 3;
    /**
     * Written by the reaper (OWNED to REVOKING to REVOKED or OWNED), the owner (REVOKED to OWNED) and
     * a virtual thread on it (OWNED or REVOKED to CARRIER); for the {@link #DEFERRING} cache by any
     * thread flushing its batches (OWNED to REVOKING to OWNED, or to REVOKED for good when the allocator closes).
     */
    @SuppressWarnings("unused") // REVOCATION
    private volatile int revocation;
    /**
     * Set once when a virtual thread first uses this cache as its carrier's, before {@link #CARRIER}
     * (which a revocation already under way delays): the reaper skips it from then on.
     */
    volatile boolean carrier;
    /**
     * 1 while a virtual thread pops or pushes this carrier's magazines ({@link #borrow()}): one at a
     * time, even when one moves to another carrier in the middle (JDK 26+ may unmount a virtual
     * thread that waits for a class's initialization, JDK-8369238, besides where it parks).
     */
    @SuppressWarnings("unused") // BORROWED
    private volatile int borrowed;
    /** The reaper's: this cache's operation count at its last look, and since when it has not changed. */
    long opsAtLastLook = -1;
    long idleSinceNanos;

    /**
     * The slab of the last tracked buffer this cache built (owned lifecycle): consecutive allocations
     * come from one slab, so most find theirs without the address-to-chunk lookup. Racy on the shared
     * kinds (virtual threads): any slab read is checked before use.
     */
    private Slab lastSlab;

    /**
     * @param id     this cache's id (what a frozen slab's owner word holds), unique among live caches
     * @param thread the owner, or {@code null} for the shared kinds
     * @param kind   {@link #CACHING}, {@link #DEFERRING} or {@link #SHARED}
     * @param caches the size classes' caches (magazine sizes, depots)
     * @param remote where remote frees go
     */
    ThreadCache(final int id, final Thread thread, final int kind, final SlabCache[] caches, final RemoteFrees remote) {
        this.id = id;
        this.thread = thread;
        this.kind = kind;
        this.caches = caches;
        this.remote = remote;
        this.out = new RemoteBatches(remote);
        final int classes = caches.length;
        this.loaded = new Magazine[classes];
        this.previous = new Magazine[classes];
        this.current = new Slab[classes];
        this.lastAddress = new long[classes];
        this.stats = new long[SCALARS + classes * CLASS_STRIDE];
        if (kind == CACHING) {
            java.util.Arrays.fill(loaded, Magazine.NONE); // made per class on first use (magazines)
            java.util.Arrays.fill(previous, Magazine.NONE);
        }
    }

    /**
     * Makes this thread's two magazines of size class {@code cls} on its first use (they are
     * {@link Magazine#NONE} until then, both or neither). Every slow path that may push, fill or trade
     * a magazine calls this first; the hit paths need not (NONE is empty and full). Owner only.
     */
    void magazines(final int cls) {
        if (loaded[cls] == Magazine.NONE) {
            final int rounds = caches[cls].magazineRounds;
            final Magazine l = new Magazine(rounds);
            final Magazine p = new Magazine(rounds); // both made before either is stored: an OOME changes nothing
            loaded[cls] = l;
            previous[cls] = p;
        }
    }

    /**
     * {@link #magazines} for the paths that must not throw (a virtual thread on this carrier's cache).
     *
     * @return false: the heap is exhausted and this class still has no magazines (nothing changed)
     */
    boolean magazinesWithoutThrowing(final int cls) {
        try {
            magazines(cls);
            return true;
        } catch (final OutOfMemoryError heapExhausted) {
            return false;
        }
    }

    static int classBase(final int sizeClass) {
        return SCALARS + sizeClass * CLASS_STRIDE;
    }

    /** Adds to a statistic; atomic only for the {@link #SHARED} instance. */
    void count(final int index, final long delta) {
        if (kind == SHARED) {
            STATS.getAndAdd(stats, index, delta);
        } else {
            stats[index] += delta;
        }
    }

    /**
     * Counts an allocation served from this {@link #CACHING} thread's magazines (plain stores): a
     * miss when it came from the slow path; the address-order figure compares with the previous one.
     */
    void countAllocation(final int cls, final long address, final int capacity, final boolean miss) {
        final long[] st = stats;
        final int base = classBase(cls);
        st[base + ALLOCS]++;
        if (miss) {
            st[base + MISSES]++;
        }
        st[ALLOC_BYTES] += capacity;
        if (address > lastAddress[cls]) {
            st[base + ASCENDING]++;
        }
        lastAddress[cls] = address;
    }

    /** Counts a release made on this thread. */
    void countFree(final int cls, final int capacity) {
        count(classBase(cls) + FREES, 1);
        count(FREE_BYTES, capacity);
    }

    // ---- magazines (owner only) -------------------------------------------------------------

    /**
     * Allocation, loaded magazine empty: pops the previous one if it has rounds (swapping the two).
     *
     * @return an object, or 0 when both magazines are empty
     */
    long popPrevious(final int cls) {
        final Magazine p = previous[cls];
        if (p.isEmpty()) {
            return 0;
        }
        p.sortForAscendingPops();
        previous[cls] = loaded[cls];
        loaded[cls] = p;
        return p.pop();
    }

    /** Keeps an object this thread holds (no statistics): on the loaded magazine, or {@link #spill}. */
    void keep(final int cls, final long address) {
        final Magazine m = loaded[cls];
        if (!m.isFull()) {
            m.push(address);
        } else {
            OutOfLine.spill(this, cls, address);
        }
    }

    /**
     * The free slow path, loaded magazine full (Bonwick's magazine layer): swap with an empty
     * previous magazine; else trade the previous one for an empty one of the depot; else (depot at
     * its limit) flush the previous one to the slabs and reuse it.
     */
    void spill(final int cls, final long address) {
        final boolean wasBusy = busy;
        busy = true;
        try {
            magazines(cls);
            final Magazine m = loaded[cls];
            final Magazine p = previous[cls];
            if (p.isEmpty()) {
                loaded[cls] = p;
                previous[cls] = m;
                p.push(address);
                return;
            }
            final SlabCache c = caches[cls];
            Magazine e;
            c.lock.lock();
            try {
                e = c.depot.exchangeForEmpty(p); // may throw (heap exhausted): nothing has changed then
                if (e == null) {
                    c.flushLocked(p, this);
                    e = p;
                }
            } finally {
                c.lock.unlock();
            }
            previous[cls] = m;
            loaded[cls] = e;
            e.push(address);
        } finally {
            busy = wasBusy;
        }
    }

    /**
     * Keeps an object without waiting for anything (a virtual thread on this carrier's cache): a push,
     * or a swap with an empty previous magazine.
     *
     * @return false when both magazines are full, or this class has none and the heap has no room for
     *         them (nothing changed)
     */
    boolean keepWithoutWaiting(final int cls, final long address) {
        if (!magazinesWithoutThrowing(cls)) {
            return false;
        }
        final Magazine m = loaded[cls];
        if (!m.isFull()) {
            m.push(address);
            return true;
        }
        final Magazine p = previous[cls];
        if (!p.isEmpty()) {
            return false;
        }
        loaded[cls] = p;
        previous[cls] = m;
        p.push(address);
        return true;
    }

    /** @return the cache of size class {@code cls}. */
    SlabCache cache(final int cls) {
        return caches[cls];
    }

    /** Debug mode: is {@code address} already waiting in this thread's magazines of {@code cls}? */
    boolean holds(final int cls, final long address) {
        for (final Magazine m : new Magazine[] {loaded[cls], previous[cls]}) {
            for (int i = 0; i < m.count; i++) {
                if (m.rounds[i] == address) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---- remote frees ----------------------------------------------------------------------

    /**
     * Sends a free to the owner of the object's slab: batched per owner for {@link #CACHING} threads
     * and for the GC cleaner thread ({@link #DEFERRING}, its {@link #batchingThread}), pushed at once
     * otherwise (never blocks). The GC cleaner thread's batches have no slow path of their own to be
     * flushed on: a full one goes at once, a partial one when a {@link Reaper#flushGcBatches flush}
     * stops that thread's batching for a moment (a revocation: meanwhile its frees are pushed at once,
     * it never waits).
     */
    void freeRemote(final int owner, final long address) {
        count(REMOTE_SENT, 1);
        if (kind != CACHING && !(kind == DEFERRING && revocation == OWNED && Thread.currentThread() == batchingThread)) {
            count(REMOTE_BATCHES, 1);
            remote.deliverMt(owner, address, address);
            return;
        }
        final int handed = out.add(owner, address);
        if (handed != 0) {
            stats[REMOTE_BATCHES] += handed;
        }
    }

    /**
     * The slab holding {@code address}, an object this cache's thread holds (handed out, not yet
     * released): the slab of the previous call when it holds the address, else looked up. The check
     * is safe without a lock: the object's slab cannot be freed while the object is held, and a slab
     * freed earlier is no longer in its chunk's page table ({@link PageHeap#freeSlab}), nor is any
     * slab of a released chunk.
     */
    Slab slabOf(final long address, final PageHeap pages) {
        final Slab last = lastSlab;
        if (last != null && last.holds(address)) {
            return last;
        }
        final Slab s = pages.slabOf(address);
        lastSlab = s;
        return s;
    }

    /**
     * @return true when the reaper revokes or revoked this cache, or it is a carrier's: the owner must
     *         {@link #resume()} before using it, or, a carrier's ({@link #isCarrier()}), {@link #borrow()} it
     */
    boolean revoked() {
        return revocation != OWNED;
    }

    /**
     * The owner, outside any kmem4j slow path, found its cache revoked: waits while the reaper
     * empties it (moments: it takes one cache lock at a time and never waits for this thread), then
     * takes it back, empty. Never throws.
     */
    void resume() {
        int r;
        while ((r = revocation) == REVOKING) {
            Thread.onSpinWait();
            Thread.yield();
        }
        if (r == REVOKED) {
            REVOCATION.compareAndSet(this, REVOKED, OWNED);
        }
    }

    /**
     * A virtual thread on this cache's thread, its carrier, makes it a carrier's for good ({@link
     * #CARRIER}), without waiting.
     *
     * @return true when it is a carrier's cache now; false while the reaper is emptying it (a
     *         revocation begun before {@link #carrier} was set: use the shared tier this time)
     */
    boolean becomeCarrier() {
        carrier = true;
        for (;;) {
            final int r = revocation;
            if (r == CARRIER) {
                return true;
            }
            if (r == REVOKING) {
                return false;
            }
            if (REVOCATION.compareAndSet(this, r, CARRIER)) {
                return true;
            }
        }
    }

    /** @return true when this is a carrier's cache ({@link #CARRIER}): its owner too uses it only {@link #borrow() borrowed} */
    boolean isCarrier() {
        return revocation == CARRIER;
    }

    /**
     * A virtual thread takes this carrier's cache for one pop or push and what it needs around it, and
     * the carrier itself, running its own code, for one allocation or free (one CAS, uncontended
     * unless a virtual thread moved to another carrier in the middle of its operation and still has
     * it). Pair with {@link #endBorrow()}. A borrower never waits for it: it uses the shared tier.
     *
     * @return true when the caller has the magazines to itself until {@link #endBorrow()}; false:
     *         another has them, use the shared tier this time
     */
    boolean borrow() {
        return BORROWED.compareAndSet(this, 0, 1);
    }

    /** Ends {@link #borrow()}: what the borrower wrote is seen by the next one (a release store). */
    void endBorrow() {
        BORROWED.setRelease(this, 0);
    }

    /** {@link #DEFERRING}: the GC cleaner thread, on its first release; the first thread bound keeps it. */
    void bindBatchingThread(final Thread t) {
        BATCHING.compareAndSet(this, null, t);
    }

    /** The reaper: @return true when this cache was owned and is now being revoked (the owner's next call waits). */
    boolean beginRevocation() {
        return REVOCATION.compareAndSet(this, OWNED, REVOKING);
    }

    /** {@link #DEFERRING}: @return true when its batching ended for good ({@link Reaper#stopGcBatching()}) */
    boolean revocationEnded() {
        return revocation == REVOKED;
    }

    /** The reaper: the revocation ends, the cache emptied ({@code emptied}) or left as it was. */
    void endRevocation(final boolean emptied) {
        revocation = emptied ? REVOKED : OWNED;
    }

    /** Forgets the slab of the last buffer built (its chunk may be released now): the reaper, emptying this cache. */
    void forgetSlabHint() {
        lastSlab = null;
    }

    /** @return allocations plus frees counted on this cache (racy; the reaper's idleness test) */
    long operations() {
        return stats[ALLOC_BYTES] + stats[FREE_BYTES];
    }

    /** @return true when this cache holds an object or a frozen slab (racy; the reaper's test) */
    boolean holdsAny() {
        for (int c = 0; c < current.length; c++) {
            if (current[c] != null || (loaded[c] != null && !loaded[c].isEmpty())
                || (previous[c] != null && !previous[c].isEmpty())) {
                return true;
            }
        }
        return pendingOutgoing() != 0 || inbox.nonEmpty();
    }

    /** Hands every pending outgoing batch to its owner. */
    void flushOutgoing() {
        flushOutgoing(this);
    }

    /**
     * Hands every pending outgoing batch to its owner, the batches counted on {@code by}: a thread that
     * flushes another's batches while that thread goes on counting its own frees (the GC cleaner thread's).
     */
    void flushOutgoing(final ThreadCache by) {
        final int handed = out.flush();
        if (handed != 0) {
            by.count(REMOTE_BATCHES, handed);
        }
    }

    /** @return frees waiting in outgoing batches. */
    int pendingOutgoing() {
        return out.pending();
    }

    /** Calls {@code action} for every free waiting in an outgoing batch (quiescent use only). */
    void forEachPending(final java.util.function.LongConsumer action) {
        out.forEachPending(action);
    }
}
