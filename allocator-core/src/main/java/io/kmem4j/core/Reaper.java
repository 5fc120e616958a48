package io.kmem4j.core;

/**
 * Gives memory back: the reaper thread ({@code kmem4j-reaper}), as Linux's slab {@code cache_reap},
 * adopts the caches of threads that have ended and returns what nobody uses to the JDK;
 * {@link #trim()} does the same at once; {@link #relieveBudgetFor} makes room under
 * {@code MaxDirectMemorySize} before a request takes the JDK's own path.
 *
 * <pre>
 *   each interval: ended threads' caches ──▶ their slabs (unfrozen), their inboxes ──▶ slabs
 *                  the GC cleaner thread's partial batches of frees ──▶ their owners' inboxes
 *                  caches of live threads idle for IDLE_LOOKS passes ──▶ the same (revoked)
 *                  orphans ──▶ slabs
 *                  idle (nothing allocated or freed since the last pass) or a thread ended:
 *                      depots, shared magazines, empty slabs ──▶ slabs ──▶ empty chunks beyond
 *                      retainedEmptyChunks ──▶ the JDK
 *                  otherwise, unless the heap grew in the last GROWTH_HOLD_INTERVALS intervals:
 *                      empty slabs beyond one per cache ──▶ pages,
 *                      chunks empty for a whole interval, beyond retainedEmptyChunks ──▶ the JDK
 *   before the heap grows: every cache's empty slabs ──▶ pages (releaseEmptySlabs)
 * </pre>
 *
 * Magazines of live threads are their owners' (at most {@code 2 * magazineRounds} objects per size
 * class and thread, fewer above 4 KiB) until the thread stays idle for {@value #IDLE_LOOKS} passes:
 * then the reaper revokes its cache ({@link #revokeIdle}).
 *
 * <p>Threads: {@link #reap()} and {@link #trim()} from any thread, serialised by this reaper's own
 * lock (never a public monitor): a caller returns only after any reap in progress is done. Lock
 * order: the reap lock, then a cache lock, then the page heap's grow lock.
 */
final class Reaper {
    /**
     * While the page heap grew within this many intervals (10 s by default), an active allocator
     * releases no empty chunk: GC gives memory back in bursts the next allocations need again
     * ({@link PageHeap#releaseDecayedChunks}).
     */
    static final int GROWTH_HOLD_INTERVALS = 10;
    private final SlabAllocatorConfig config;
    private final SlabCache[] caches;
    private final PageHeap pages;
    private final ThreadRegistry registry;
    private final RemoteFrees remote;
    private final Accounting accounting;
    private final java.util.concurrent.locks.ReentrantLock reapLock = new java.util.concurrent.locks.ReentrantLock();
    private final Thread thread;
    private volatile boolean stopped;
    /** {@link ThreadRegistry#activity()} at the end of the previous reap (under the reap lock). */
    private long activityAtLastReap = -1;

    Reaper(final SlabAllocatorConfig config, final SlabCache[] caches, final PageHeap pages,
           final ThreadRegistry registry, final RemoteFrees remote, final Accounting accounting) {
        this.config = config;
        this.caches = caches;
        this.pages = pages;
        this.registry = registry;
        this.remote = remote;
        this.accounting = accounting;
        this.idleNanos = IDLE_LOOKS * config.reapIntervalMillis() * 1_000_000L;
        // built by whichever thread builds the allocator (with the agent: the application's first direct
        // allocation, e.g. a request thread of a web container), so nothing of that thread is inherited: the
        // top thread group, no inheritable thread locals, no context class loader, normal priority
        this.thread = newThread(new Runnable() { // not this::loop: no lambda spun at start-up
            @Override
            public void run() {
                loop();
            }
        });
        thread.setDaemon(true);
        thread.setPriority(Thread.NORM_PRIORITY);
        thread.setContextClassLoader(null);
        final int depth = StackDepth.LIMIT; // found now, on the building thread, not on the first thread to flush GC batches
        assert depth > 0;
    }

    void start() {
        thread.start();
    }

    /**
     * The reaper's thread, in the top thread group, without inheritable thread locals, and (on 17-23)
     * without the creating thread's access-control context, which holds the class loaders of every
     * class on its stack (a web application's, when its request thread built the allocator): the
     * {@code doPrivileged} leaves only kmem4j's.
     */
    @SuppressWarnings("removal") // AccessController: still what decides a new thread's inherited context on 17-23
    private static Thread newThread(final Runnable loop) {
        return java.security.AccessController.doPrivileged(new java.security.PrivilegedAction<Thread>() {
            @Override
            public Thread run() {
                return new Thread(topGroup(), loop, "kmem4j-reaper", 0, false);
            }
        });
    }

    /** The root of the thread groups (the "system" group); a virtual thread's own group is not a parent of it. */
    private static ThreadGroup topGroup() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g != null && g.getParent() != null) {
            g = g.getParent();
        }
        return g;
    }

    /** Stops the reaper thread (a reap in progress finishes). */
    void stop() {
        stopped = true;
        thread.interrupt();
    }

    private void loop() {
        while (!stopped) {
            try {
                Thread.sleep(config.reapIntervalMillis());
                reap();
            } catch (final InterruptedException e) {
                return;
            } catch (final Throwable t) {
                accounting.hookFailures.increment();
            }
        }
    }

    /**
     * Tasks of the layers above ({@link SlabAllocator#onReap}), run at the start of each pass, on
     * whichever thread runs it (the reaper, a {@code trim()} or {@code close()} caller, an allocating
     * thread relieving the budget): a task must tolerate concurrent runs.
     */
    private final java.util.List<Runnable> tasks = new java.util.concurrent.CopyOnWriteArrayList<>();
    /**
     * Tasks of the layers above ({@link SlabAllocator#onReapOffAllocation}): as {@link #tasks}, but not
     * in the passes an allocating thread runs to relieve the budget.
     */
    private final java.util.List<Runnable> tasksOffAllocation = new java.util.concurrent.CopyOnWriteArrayList<>();

    void onReap(final Runnable task) {
        tasks.add(java.util.Objects.requireNonNull(task, "task"));
    }

    void onReapOffAllocation(final Runnable task) {
        tasksOffAllocation.add(java.util.Objects.requireNonNull(task, "task"));
    }

    /** Runs the layers' tasks; a failing one is counted and the others still run. */
    private void runTasks(final java.util.List<Runnable> list) {
        for (final Runnable task : list) {
            try {
                task.run();
            } catch (final Throwable t) {
                accounting.hookFailures.increment();
            }
        }
    }

    /** One reaper pass (see the class comment), not on behalf of an allocation. */
    void reap() {
        reap(false);
    }

    /**
     * One reaper pass (see the class comment).
     *
     * @param forAllocation run by an allocating thread relieving the budget: the layers' slow tasks
     *        ({@link #onReapOffAllocation}) wait for the next other pass
     */
    private void reap(final boolean forAllocation) {
        runTasks(tasks); // first: what a layer above gives back is then reaped in this pass
        if (!forAllocation) {
            runTasks(tasksOffAllocation);
        }
        reapLock.lock();
        try {
            final java.util.List<ThreadCache> ended = registry.takeEnded();
            final java.util.List<ThreadCache> retired = new java.util.ArrayList<>(ended.size());
            try {
                for (final ThreadCache tc : ended) {
                    if (retire(tc, RETIRE_TRIES)) {
                        retired.add(tc);
                    }
                }
                flushGcBatches(); // first: what it hands to idle threads' inboxes is given back by revokeIdle
                revokeIdle();
                passAfterRetiring(!retired.isEmpty());
            } finally {
                // last: a reader that sees these caches gone (ThreadCaches) also sees what they held given
                // back (ThreadChurnIT read BytesReserved between the two on a busy box: 113 MB instead of 8);
                // in a finally, so that a failure later in the pass still forgets every cache it retired
                forgetAll(retired);
            }
        } finally {
            reapLock.unlock();
        }
    }

    private void forgetAll(final java.util.List<ThreadCache> retired) {
        for (final ThreadCache tc : retired) {
            registry.forget(tc);
        }
    }

    /**
     * Empties the caches of threads that ended since the last pass, now, for a thread about to grow the
     * page heap: their frozen slabs and magazines go back to the slabs, so that the growing thread
     * carves from them instead (a program starting short-lived threads faster than one reaper interval,
     * each taking a frozen slab per size class it uses, reached the direct-memory limit with a few
     * megabytes live). Takes the reap lock only if it is free (a pass under way does this work); called
     * without any cache lock.
     *
     * @return how many caches were emptied
     */
    int retireEnded() {
        // never waits: a thread that holds the lock runs a pass, which retires these caches itself, and a
        // storm thread must not queue on a JDK-wide kmem4j lock (StormIT caught exactly that, JDK 27)
        if (!reapLock.tryLock()) {
            return 0;
        }
        try {
            final java.util.List<ThreadCache> ended = registry.takeEnded();
            if (ended.isEmpty()) {
                return 0;
            }
            final java.util.List<ThreadCache> retired = new java.util.ArrayList<>(ended.size());
            try {
                for (final ThreadCache tc : ended) {
                    if (retire(tc, 1)) {
                        retired.add(tc);
                    }
                }
                remote.returnOrphans(registry.reaper);
            } finally {
                forgetAll(retired);
            }
            return retired.size();
        } finally {
            reapLock.unlock();
        }
    }

    /**
     * Empties the caches of live threads that stayed idle ({@value #IDLE_LOOKS} passes in a row with
     * no allocation or free) while holding objects or frozen slabs: a thread parked in a pool or
     * blocked on a socket would otherwise keep them, and the chunks they pin, for as long as it lives
     * (an echo server idle after a burst held 30 chunks, 123 MB, for 8 KB of live buffers). Each is
     * revoked ({@link ThreadCache}, "Revocation"): the owner's next call into kmem4j waits until its
     * cache is empty and then goes on with it. Never a carrier of virtual threads; never a thread with
     * a kmem4j frame on its stack (inside a call, it keeps its cache). The reap lock held.
     */
    private void revokeIdle() {
        final long now = System.nanoTime();
        for (final ThreadCache tc : registry.platformCaches()) {
            final long ops = tc.operations();
            if (ops != tc.opsAtLastLook) {
                tc.opsAtLastLook = ops;
                tc.idleSinceNanos = now;
                continue;
            }
            // by time, not by passes: trim() and the limit's back-off run passes back to back
            if (now - tc.idleSinceNanos < idleNanos || tc.carrier || !tc.holdsAny()) {
                continue;
            }
            if (!revoke(tc)) {
                tc.idleSinceNanos = now; // inside kmem4j (waiting on a lock, say): look again after another idle spell
            }
        }
    }

    /** Reaper intervals without an allocation or free on a live thread after which its cache is emptied. */
    static final int IDLE_LOOKS = 2;
    /** {@link #IDLE_LOOKS} intervals, ns (tests set 0: a pass revokes what the previous one found idle). */
    long idleNanos;
    /** The package of the code that touches thread caches: a thread with a frame of it on its stack is inside a call. */
    private static final String CORE_PACKAGE = Reaper.class.getPackageName() + ".";

    /** @return true when {@code tc} was emptied; false when its owner was inside a call into kmem4j (or is a carrier) */
    boolean revoke(final ThreadCache tc) {
        if (!tc.beginRevocation()) {
            return false;
        }
        boolean emptied = false;
        try {
            if (tc.carrier || !outsideKmem4j(tc.thread)) {
                return false;
            }
            final long chain = tc.inbox.takeAll();
            tc.flushOutgoing();
            giveBackAll(tc, registry.reaper);
            tc.forgetSlabHint();
            remote.returnToSlabs(chain, registry.reaper);
            revocations++;
            emptied = true;
            return true;
        } finally {
            tc.endRevocation(emptied);
        }
    }

    /** Caches of live idle threads emptied so far (under the reap lock; tests). */
    long revocations;

    /**
     * Hands the GC cleaner thread's partial batches of frees to their owners ({@link ThreadCache#freeRemote}):
     * that thread has no slow path to flush them on, and after a collection's burst of cleaners the last
     * frees of each owner would wait there for the next collection. A revocation of its cache, as
     * {@link #revoke} does for an idle thread's, except that the GC cleaner thread never waits for it: while
     * the flush runs, its frees are pushed one at a time. Done when it freed something since the last
     * flush and its stack has no kmem4j frame (a handshake, a global safepoint on 17: at most once per
     * reaper pass and per attempt to grow or reclaim after reference processing, and only after GC
     * frees). Any thread; two at once: one flushes, the other returns.
     *
     * @return true when it flushed (or there was nothing to flush)
     */
    boolean flushGcBatches() {
        final ThreadCache gc = registry.gc;
        final Thread t = gc.batchingThread;
        if (t == null || gc.operations() == gc.opsAtLastFlush) { // racy, a hint: no frees since the last flush
            return true;
        }
        if (!gc.beginRevocation()) {
            return false; // another flush runs, or batching stopped (close)
        }
        try {
            final long ops = gc.operations(); // before the handshake: a free counted later is flushed, or flushed next time
            if (!outsideKmem4j(t)) {
                return false; // inside a free: a later pass, or its next full batch
            }
            gc.flushOutgoing(registry.reaper); // counted there: the GC cleaner thread may count its own meanwhile
            gc.opsAtLastFlush = ops;
            gcFlushes++;
            return true;
        } finally {
            gc.endRevocation(false); // OWNED again (it never takes its cache back: it never waited)
        }
    }

    /** Flushes of the GC cleaner thread's batches that handed them over (racy; tests). */
    volatile long gcFlushes;

    /**
     * Ends the batching of GC-driven frees for good ({@link SlabAllocator#close()}: no reaper pass will
     * flush them again): from now on the GC cleaner thread pushes each free at once, and what it
     * batched is handed over as soon as its stack shows it outside kmem4j (waiting up to a second for
     * that; after a second of frees without a pause the batches stay, at most {@link RemoteBatches#SLOTS}
     * times {@link RemoteBatches#BATCH} frees, until a {@code trim()}).
     */
    void stopGcBatching() {
        final ThreadCache gc = registry.gc;
        while (!gc.beginRevocation()) { // a flush under way ends in moments
            if (gc.revocationEnded()) {
                return; // stopped already
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        final Thread t = gc.batchingThread;
        try {
            for (int i = 0; t != null && i < 1000; i++) {
                if (outsideKmem4j(t)) {
                    gc.flushOutgoing(registry.reaper);
                    return;
                }
                Thread.sleep(1);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            gc.endRevocation(true); // never OWNED again: the GC cleaner thread never takes it back
        }
    }

    /**
     * Takes {@code t}'s stack: a handshake with that thread on JDK 19 and later, a global safepoint on
     * 17 (the thread stops at a safepoint poll, or is blocked), which also orders its later loads after
     * this thread's earlier stores.
     *
     * @return true when no frame of kmem4j's core is on it (an empty stack, a refusal, a stack cut at
     *         {@code -XX:MaxJavaStackTraceDepth} whose deeper frames are unseen: false)
     */
    private static boolean outsideKmem4j(final Thread t) {
        final StackTraceElement[] stack;
        try {
            stack = t.getStackTrace();
        } catch (final RuntimeException refused) {
            return false;
        }
        if (stack.length == 0 || stack.length >= StackDepth.LIMIT) {
            return false;
        }
        for (final StackTraceElement e : stack) {
            if (e.getClassName().startsWith(CORE_PACKAGE)) {
                return false;
            }
        }
        return true;
    }

    /**
     * How many frames {@code Thread.getStackTrace} returns at most ({@code -XX:MaxJavaStackTraceDepth},
     * 1024 by default): a stack of that length may hide a kmem4j frame below the cut. Found once, by
     * taking this thread's stack deeper than the default limit.
     */
    private static final class StackDepth {
        static final int LIMIT = limit();

        private static int limit() {
            try {
                return probe(0);
            } catch (final StackOverflowError deepAlready) {
                return 1024; // the JVM's default; the probe ran on a thread with little stack left
            }
        }

        private static int probe(final int depth) {
            if (depth < 1100) {
                return probe(depth + 1);
            }
            final int seen = Thread.currentThread().getStackTrace().length;
            return seen > depth ? Integer.MAX_VALUE : seen; // no cut seen: no limit short of this depth
        }
    }

    /** The rest of a pass (the reap lock held): orphans, then shrink or decay. */
    private void passAfterRetiring(final boolean retiredAny) {
        remote.returnOrphans(registry.reaper);
        final long activity = registry.activity();
        if (retiredAny || activity == activityAtLastReap) {
            shrink(config.retainedEmptyChunks());
        } else {
            // active: only chunks that stayed empty for a whole interval (a collection's burst of
            // frees empties chunks the next allocations need again), and none while the heap grows
            final long interval = config.reapIntervalMillis() * 1_000_000L;
            final long hold = GROWTH_HOLD_INTERVALS * interval;
            if (!pages.grewWithin(hold) || pages.failedWithin(hold)) {
                releaseEmptySlabs(1); // one empty slab per cache stays, for the next burst
            }
            pages.releaseDecayedChunks(config.retainedEmptyChunks(), interval, hold);
        }
        activityAtLastReap = activity;
    }

    /**
     * Reaps, then flushes every depot, frees empty slabs and releases every wholly empty chunk.
     *
     * @return bytes of chunk memory released
     */
    long trim() {
        return trim(false, 0);
    }

    /**
     * A counted trim: one pass, then {@link #shrink}.
     *
     * @param forAllocation see {@link #reap(boolean)}
     * @param keepChunks    empty chunks kept ({@code Integer.MAX_VALUE}: all)
     */
    private long trim(final boolean forAllocation, final int keepChunks) {
        accounting.trims.increment();
        reap(forAllocation);
        return shrink(keepChunks);
    }

    /**
     * Gives the empty slabs of every cache back to the page heap, keeping {@code keep} per cache:
     * before the heap grows (one size class must not grow the heap while another keeps empty slabs),
     * and from the reaper. Takes each cache lock in turn; the caller holds none.
     *
     * @return slabs given back
     */
    int releaseEmptySlabs(final int keep) {
        return releaseEmptySlabs(keep, null);
    }

    /**
     * As {@link #releaseEmptySlabs(int)}, but leaves {@code except}'s alone (the caller's own class:
     * its empty slabs are what it would carve from) and skips caches that keep none (a racy read of
     * their count, so most of the locks are never taken).
     */
    int releaseEmptySlabs(final int keep, final SlabCache except) {
        int released = 0;
        for (final SlabCache c : caches) {
            if (c == except || c.emptySlabsHint() <= keep) {
                continue;
            }
            c.lock.lock();
            try {
                released += c.releaseEmptySlabsLocked(keep);
            } finally {
                c.lock.unlock();
            }
        }
        return released;
    }

    /**
     * An ended thread's cache: its inbox closed and emptied, its batches sent, its magazines and slabs
     * given back. The caller then forgets it ({@link ThreadRegistry#forget}); frees sent to it
     * meanwhile find its inbox closed and go to the orphans.
     */
    private boolean retire(final ThreadCache tc, final int tries) {
        if (!borrowToRetire(tc, tries)) {
            registry.putBackEnded(tc); // the next pass tries again; this one does not hold the reap lock waiting
            return false;
        }
        // (never given back: the cache is gone)
        final long chain = tc.inbox.close();
        tc.flushOutgoing();
        giveBackAll(tc, registry.reaper);
        remote.returnToSlabs(chain, registry.reaper);
        return true;
    }

    /** Tries to end use of an ended thread's cache for good: a carrier's may still be borrowed by a virtual thread that moved meanwhile. */
    private static boolean borrowToRetire(final ThreadCache tc, final int tries) {
        for (int i = 0; i < tries; i++) {
            if (tc.borrow()) {
                return true;
            }
            Thread.yield();
        }
        return false;
    }

    /** How often a pass tries to borrow an ended carrier's cache before leaving it to the next pass (a growing thread tries once). */
    static final int RETIRE_TRIES = 1_000;

    /** Flushes depots and shared magazines, frees empty slabs and releases empty chunks beyond {@code keepChunks}. */
    private long shrink(final int keepChunks) {
        for (final SlabCache c : caches) {
            c.lock.lock();
            try {
                c.shrinkLocked(registry.reaper);
            } finally {
                c.lock.unlock();
            }
        }
        return pages.releaseEmptyChunks(keepChunks);
    }

    /**
     * Returns every object {@code tc} caches (both magazines of every size class) to its slab and
     * unfreezes its slabs. Called for a thread that ended (by the reaper), or by {@code tc}'s own
     * thread ({@code me == tc}) when the budget runs short.
     */
    void giveBackAll(final ThreadCache tc, final ThreadCache me) {
        for (int cls = 0; cls < caches.length; cls++) {
            final SlabCache c = caches[cls];
            c.lock.lock();
            try {
                final Slab s = tc.current[cls];
                if (s != null) {
                    tc.current[cls] = null;
                    c.unfreezeLocked(s);
                }
                c.flushLocked(tc.loaded[cls], me);
                c.flushLocked(tc.previous[cls], me);
            } finally {
                c.lock.unlock();
            }
        }
    }

    /**
     * Gives back what kmem4j caches, for a request that meets the limit: the calling thread's frees
     * in flight and its magazines and frozen slabs of every class (a platform thread's), then what
     * {@link #trim()} gives back (without the tasks of {@link #onReapOffAllocation}). The caller's thread
     * only, with its cache busy (and not revoked).
     *
     * @param releaseChunks true for a request the JDK's path will serve (above the largest class):
     *        empty chunks go back to the JDK's budget; false for one kmem4j serves itself: they stay,
     *        so that its retry carves from them instead of releasing and reserving a chunk again
     * @return bytes of chunk memory released to the JDK
     */
    long relieve(final ThreadCache tc, final boolean releaseChunks) {
        if (tc.kind == ThreadCache.CACHING) {
            tc.flushOutgoing();
            remote.drain(tc);
            giveBackAll(tc, tc);
        }
        // without releasing chunks, empty slabs still go back to the pages; the chunks stay, for this very request
        return trim(true, releaseChunks ? 0 : Integer.MAX_VALUE);
    }

    /**
     * A request this allocator does not serve is about to take the JDK's own path. When it would not
     * fit under {@code MaxDirectMemorySize} now, give back what kmem4j caches first (the caller's own
     * magazines and frozen slabs, every depot and empty slab, every empty chunk), so that the JDK's
     * reservation, which reclaims only with GC, can use that memory (field case C1: without this, a
     * program that had freed everything got an {@code OutOfMemoryError} the JDK alone did not throw).
     * Costs one try-reservation (a CAS on the JDK's counter) per fallback; nothing unless the budget
     * is short; then, when kmem4j's chunks could make the room, the JDK's own reclaiming done here
     * first (see {@link #relieveAsOwner}). Never throws.
     */
    void relieveBudgetFor(final int capacity) {
        try {
            if (JdkInternals.fitsUnderTheLimit(capacity)) {
                return;
            }
            final ThreadCache tc = registry.current();
            if (tc.busy) {
                return;
            }
            final boolean borrowed = tc.kind == ThreadCache.CACHING && tc.isCarrier();
            if (borrowed) {
                if (!tc.borrow()) {
                    return; // a carrier whose magazines a virtual thread that moved still has (JDK 26+)
                }
            } else if (tc.kind == ThreadCache.CACHING && tc.revoked()) {
                tc.resume(); // as on the hit paths: the reaper may be emptying this cache (found by a review)
            }
            try {
                relieveAsOwner(tc, capacity);
            } finally {
                if (borrowed) {
                    tc.endBorrow();
                }
            }
        } catch (final Throwable t) {
            accounting.hookFailures.increment(); // never in the way of the JDK's own path
        }
    }

    /**
     * After a reclaim for a large request that did not make room (what kmem4j holds is live), none for
     * this long: a program retrying such requests pays the JDK's own cost, not this one as well.
     */
    static final long RELIEF_HOLD_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /** When the last such reclaim failed ({@link System#nanoTime()}); racy, a hint. */
    private volatile long reliefFailedNanos = System.nanoTime() - RELIEF_HOLD_NANOS;

    /**
     * {@link #relieveBudgetFor}, the caller's own cache usable ({@code busy} off, not revoked or
     * borrowed). When giving back is not enough but kmem4j's chunks could make the room, it reclaims
     * as the JDK's path would ({@link AtTheLimit}: the collection, the cleaners, the back-off), giving
     * back after each step, until the request fits: the buffers a collection finds come back to
     * kmem4j's slabs, and their chunks would otherwise stay reserved while the JDK's reservation
     * waits and fails (trial: a program that dropped 2,000 buffers of 4 KiB got 55 buffers of 1 MiB
     * under a 64 MiB limit, 64 without the agent). A request that does not fit even then costs that
     * back-off and the JDK's own; after such a failure none is tried for {@link #RELIEF_HOLD_NANOS}.
     * Platform threads only (see the code).
     */
    private void relieveAsOwner(final ThreadCache tc, final int capacity) {
        final Events.BudgetPressure event = Events.recorder() ? new Events.BudgetPressure() : null;
        if (event != null) {
            event.begin();
            event.cache = "(above the largest size class)";
        }
        tc.busy = true;
        try {
            final long[] released = {relieve(tc, true)};
            final long reserved = pages.reservedBytes();
            // a platform thread's own cache only: never the GC cleaner thread's (helping reference processing
            // would wait for itself), never the one shared cache of virtual threads (busy for the whole
            // reclaim, it would send every virtual thread to the JDK's path)
            if (tc.kind == ThreadCache.CACHING && reserved > 0 && System.nanoTime() - reliefFailedNanos >= RELIEF_HOLD_NANOS
                && !JdkInternals.fitsUnderTheLimit(capacity)
                && (capacity <= reserved || JdkInternals.fitsUnderTheLimit(capacity - reserved))) {
                // kmem4j's chunks could make the room: reclaim as the JDK's path would, giving back after each step
                AtTheLimit.reclaim(tc, capacity, () -> {
                    released[0] += relieve(tc, true);
                    return 0;
                }, () -> { });
                if (!JdkInternals.fitsUnderTheLimit(capacity)) {
                    reliefFailedNanos = System.nanoTime(); // live buffers, not garbage: spare the next requests
                }
            }
            if (event != null) {
                event.releasedBytes = released[0];
            }
        } finally {
            tc.busy = false;
            if (event != null) {
                event.commit();
            }
        }
    }
}
