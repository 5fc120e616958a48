package io.kmem4j.core;

/**
 * Deferred cross-thread free: where a free goes when the freeing thread does not own the object's
 * slab, and how it comes home. The idea is the Linux 6.18 UDP receive series' deferred free
 * ({@code skb_attempt_defer_free} sends a free back to the CPU that allocated it, so that CPU's
 * caches and locks stay its own) and mimalloc's thread-free lists.
 *
 * <pre>
 *   freeing thread ──RemoteBatches (≤ 4 owners × 32)──▶ deliverMt ──one CAS──▶ owner's RemoteInbox
 *                                                              └─ owner gone ──▶ orphans
 *   GC cleaner thread ──RemoteBatches, the partial ones flushed by Reaper.flushGcBatches──▶ (the same, never waiting)
 *   virtual threads ──one free at a time──▶ (the same, never waiting)
 *   owner's slow path ◀── drain: takes its inbox and the orphans with one swap each, keeps them
 *   a request at the limit ◀── takeFromOthers: frees of its class sent to other threads (one swap each)
 *   reaper ◀── returnOrphans: orphans back to their slabs
 * </pre>
 *
 * <p>Ownership: other threads may hand objects back; only the owner takes them ("foreign-thread"
 * entry points end in {@code Mt}), except at the limit ({@link #takeFromOthers}). The table of inboxes is indexed by thread-cache id and written
 * copy-on-write by the {@link ThreadRegistry} under its lock; a reader sees either the old or the
 * new table. An id can be reused by a new thread after its owner ended: a free sent to the old
 * owner then lands in the new thread's inbox, which is harmless (magazines take objects of any slab
 * of their class; the old owner's slabs were unfrozen before its id was given back), or in a closed
 * inbox, which refuses it, and it goes to the orphans.
 */
final class RemoteFrees {
    /** Deferred frees with no live owner; drained by any thread's slow path and by the reaper. */
    final RemoteInbox orphans = new RemoteInbox();
    private final PageHeap pages;
    private final boolean zeroOnFree;
    private volatile RemoteInbox[] inboxes = new RemoteInbox[64];

    /**
     * @param pages      where freed objects live
     * @param zeroOnFree true when objects wait all-zero: an arriving free is zeroed by its receiver
     *                   (senders never zero: the GC cleaner thread must not)
     */
    RemoteFrees(final PageHeap pages, final boolean zeroOnFree) {
        this.pages = pages;
        this.zeroOnFree = zeroOnFree;
    }

    /** Makes {@code inbox} the inbox of thread-cache {@code id} (the registry's lock held). */
    void openLocked(final int id, final RemoteInbox inbox) {
        RemoteInbox[] t = inboxes;
        t = id >= t.length ? java.util.Arrays.copyOf(t, Math.max(id + 1, t.length * 2)) : t.clone();
        t[id] = inbox;
        inboxes = t;
    }

    /** Thread-cache {@code id} is gone: later frees for it go to the orphans (the registry's lock held). */
    void closeLocked(final int id) {
        final RemoteInbox[] t = inboxes.clone();
        t[id] = null;
        inboxes = t;
    }

    /** Hands a linked batch {@code first .. last} to {@code owner}'s inbox, or to the orphans when that owner is gone. */
    void deliverMt(final int owner, final long first, final long last) {
        final RemoteInbox[] t = inboxes;
        final RemoteInbox in = owner < t.length ? t[owner] : null;
        if (in == null || !in.pushMt(first, last)) {
            orphans.pushMt(first, last);
        }
    }

    /** A free whose slab has no owner, from a thread that must not take a lock: counted as sent, left to whoever drains the orphans. */
    void orphanMt(final ThreadCache tc, final long address) {
        tc.count(ThreadCache.REMOTE_SENT, 1);
        tc.count(ThreadCache.REMOTE_BATCHES, 1);
        orphans.pushMt(address, address);
    }

    /** The owner's slow path: takes in the frees sent to {@code tc}, and the orphans, into its magazines. */
    void drain(final ThreadCache tc) {
        if (tc.inbox.nonEmpty()) {
            OutOfLine.absorb(this, tc, tc.inbox.takeAll());
        }
        if (orphans.nonEmpty()) {
            OutOfLine.absorb(this, tc, orphans.takeAll());
        }
    }

    /**
     * At the limit ({@link AtTheLimit}): up to {@code max} frees of size class {@code cls} sent to
     * other threads, each handed to {@code sink}; the frees of other classes, and those beyond
     * {@code max}, go back to the inbox they came from (one swap to take an inbox, one CAS to put the
     * rest back; to the orphans when it closed meanwhile). GC sends a collected buffer to the thread
     * whose slab it came from, and a thread that has stopped allocating (or allocates less) drains its
     * inbox only on its own slow path, so without this the memory a collection gave back could sit
     * there while this request failed (seen once in about 20 runs of {@code CollectAtTheLimitTest}:
     * about a chunk's worth in other threads' inboxes). Taking another thread's frees is safe: a
     * magazine holds objects of any slab of its class, and {@link RemoteInbox#takeAll} may be called
     * from any thread. Only the class asked for is taken, so the owner still finds its other frees
     * (found by a review).
     *
     * @param tc   the caller's cache: its own inbox is skipped, and the frees taken are counted on it
     *             as absorbed, as {@link #drain} counts them
     * @param sink takes an object (its link word already cleared, or the whole object zeroed with
     *             {@code zeroOnFree}); when it throws, the objects not yet taken go to the orphans
     * @return objects handed to {@code sink}
     */
    int takeFromOthers(final ThreadCache tc, final int cls, final int max, final java.util.function.LongConsumer sink) {
        int taken = 0;
        try {
            for (final RemoteInbox in : inboxes) {
                if (taken >= max) {
                    break;
                }
                if (in == null || in == tc.inbox || !in.nonEmpty()) {
                    continue;
                }
                long a = in.takeAll();
                long next = 0;
                long rest = 0;
                long restTail = 0;
                try {
                    while (a != 0) {
                        next = RemoteInbox.next(a);
                        final SlabCache c = pages.cacheOf(a);
                        if (taken < max && c.classIndex == cls) {
                            clearDeferred(a, c.objectSize);
                            sink.accept(a);
                            taken++;
                        } else {
                            if (rest == 0) {
                                restTail = a;
                            }
                            rest = RemoteInbox.link(a, rest);
                        }
                        a = next;
                    }
                } catch (final Throwable t) {
                    orphans.pushMt(a, a); // the one refused (its link word may be cleared already) ...
                    orphans.pushChain(next); // ... the ones after it ...
                    if (rest != 0) {
                        orphans.pushMt(rest, restTail); // ... and the ones set aside: nothing is lost
                    }
                    throw t;
                }
                if (rest != 0 && !in.pushMt(rest, restTail)) {
                    orphans.pushMt(rest, restTail);
                }
            }
        } finally {
            tc.count(ThreadCache.REMOTE_ABSORBED, taken); // as absorb counts: each one the sink took
        }
        return taken;
    }

    /**
     * A virtual thread on {@code carrier}'s cache: takes in the frees sent to the carrier, and the
     * orphans, as far as its magazines hold them without waiting ({@link ThreadCache#keepWithoutWaiting});
     * the rest go back to the orphans, for whoever drains them next.
     */
    void drainWithoutWaiting(final ThreadCache carrier) {
        if (carrier.inbox.nonEmpty()) {
            keepWithoutWaiting(carrier, carrier.inbox.takeAll());
        }
        if (orphans.nonEmpty()) {
            keepWithoutWaiting(carrier, orphans.takeAll());
        }
    }

    private void keepWithoutWaiting(final ThreadCache carrier, final long chain) {
        long n = 0;
        long a = chain;
        while (a != 0) {
            final SlabCache c = pages.cacheOf(a);
            final long next = RemoteInbox.next(a);
            if (!carrier.keepWithoutWaiting(c.classIndex, a)) {
                orphans.pushChain(a); // a and the rest, still linked
                break;
            }
            clearDeferred(a, c.objectSize); // (keepWithoutWaiting never touches the object's memory)
            n++;
            a = next;
        }
        carrier.count(ThreadCache.REMOTE_ABSORBED, n);
    }

    /** Takes a chain of frees into {@code tc}'s magazines (called {@link OutOfLine#absorb out of line}). */
    void absorb(final ThreadCache tc, final long chain) {
        long n = 0;
        long a = chain;
        try {
            while (a != 0) {
                final SlabCache c = pages.cacheOf(a);
                final long next = RemoteInbox.next(a);
                tc.keep(c.classIndex, a);
                clearDeferred(a, c.objectSize); // (keep never touches the object's memory)
                n++;
                a = next;
            }
        } catch (final Throwable t) {
            orphans.pushChain(a); // nothing is stranded: the rest waits for the next drain
            throw t;
        } finally {
            tc.count(ThreadCache.REMOTE_ABSORBED, n);
            if (n > Events.BACKLOG_THRESHOLD && Events.recorder()) {
                final Events.RemoteFreeBacklog e = new Events.RemoteFreeBacklog();
                e.frees = n;
                e.commit();
            }
        }
    }

    /** The reaper and trim: orphaned frees back to their slabs. */
    void returnOrphans(final ThreadCache me) {
        if (orphans.nonEmpty()) {
            returnToSlabs(orphans.takeAll(), me);
        }
    }

    /** Returns every free of {@code chain} to its slab, on behalf of {@code me} (each under its cache's lock). */
    void returnToSlabs(final long chain, final ThreadCache me) {
        long n = 0;
        final Chunk[] hint = new Chunk[1];
        for (long a = chain; a != 0; ) {
            final long next = RemoteInbox.next(a);
            final Slab s = pages.slabOf(a, hint);
            clearDeferred(a, s.objectSize);
            s.cache.lock.lock();
            try {
                s.cache.returnObjectLocked(s, a, me);
            } finally {
                s.cache.lock.unlock();
            }
            n++;
            a = next;
        }
        me.count(ThreadCache.REMOTE_ABSORBED, n);
    }

    /** A deferred free arrives: clear its link word, or with {@code zeroOnFree} the whole object. */
    private void clearDeferred(final long address, final int objectSize) {
        if (zeroOnFree) {
            Zeroing.zero(address, objectSize);
        } else {
            RemoteInbox.unlink(address);
        }
    }
}
