package io.kmem4j.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Per-thread cache: for each size class a loaded and a previous {@link Magazine} and the thread's
 * frozen slab; the thread's {@link RemoteInbox}; outgoing batches of remote frees; and plain
 * statistics counters.
 *
 * <pre>
 *   loaded[c]   ─pop/push─▶ the fast path: one array load and one store, no lock, no atomic
 *   previous[c] ─swap─────▶ exchanged with loaded when loaded is empty (alloc) or full (free)
 *   current[c]  frozen slab: refills take its lowest free objects without a lock
 *   out[k]      up to 4 batches of frees for other owners, linked through the freed objects,
 *               handed over in one CAS when 32 deep or on this thread's next slow path
 *   inbox       frees other threads sent to this owner; absorbed on this thread's slow path
 * </pre>
 *
 * <p>Kinds: {@link #CACHING} for platform threads (everything above); {@link #DEFERRING} for the
 * JDK's "Reference Handler" thread, which runs GC-driven cleaners and must never block, so each of
 * its frees is pushed to the owner's inbox at once; {@link #SHARED}, one instance for all virtual
 * threads, which allocate under the cache lock and defer their frees (never one cache per virtual
 * thread).
 *
 * <p>Ownership: every field except {@code inbox} is written only by the owning thread (or, for a
 * dead thread, by the reaper after {@code Thread.isAlive()} returned false, which orders it after
 * the thread's last action). Statistics are read racily by {@link SlabAllocator#stats()}. The
 * {@link #SHARED} instance updates its statistics atomically.
 */
final class ThreadCache {
    static final int CACHING = 0;
    static final int DEFERRING = 1;
    static final int SHARED = 2;

    static final int OUT_SLOTS = 4;
    static final int REMOTE_BATCH = 32;

    // scalar statistics (indices into stats)
    static final int ALLOC_BYTES = 0;
    static final int FREE_BYTES = 1;
    static final int EXPLICIT_FREES = 2;
    static final int GC_FREES = 3;
    static final int REMOTE_SENT = 4;
    static final int REMOTE_ABSORBED = 5;
    static final int REMOTE_BATCHES = 6;
    static final int SCALARS = 8;
    // per-class statistics: stats[classBase(c) + k]; one 64-byte line per class
    static final int ALLOCS = 0;
    static final int FREES = 1;
    static final int HITS = 2;
    static final int MISSES = 3;
    static final int ASCENDING = 4;
    static final int CLASS_STRIDE = 8;

    private static final VarHandle STATS = MethodHandles.arrayElementVarHandle(long[].class);

    final SlabAllocator allocator;
    final int id;
    final Thread thread;
    final int kind;
    final Magazine[] loaded;
    final Magazine[] previous;
    final Slab[] current;
    final long[] lastAddress;
    final long[] stats;
    final RemoteInbox inbox = new RemoteInbox();

    private final int[] outOwner = new int[OUT_SLOTS];
    private final long[] outHead = new long[OUT_SLOTS];
    private final long[] outTail = new long[OUT_SLOTS];
    private final int[] outCount = new int[OUT_SLOTS];

    /** Re-entrancy guard: set while this thread is inside an allocator slow path. */
    boolean busy;

    /** Allocations left until the next sampled one (site sampling on). */
    int sampleCountdown;

    ThreadCache(final SlabAllocator allocator, final int id, final Thread thread, final int kind) {
        this.allocator = allocator;
        this.id = id;
        this.thread = thread;
        this.kind = kind;
        final int classes = allocator.classes.count();
        this.loaded = new Magazine[classes];
        this.previous = new Magazine[classes];
        this.current = new Slab[classes];
        this.lastAddress = new long[classes];
        this.stats = new long[SCALARS + classes * CLASS_STRIDE];
        if (kind == CACHING) {
            for (int c = 0; c < classes; c++) {
                final int rounds = allocator.cache(c).magazineRounds;
                loaded[c] = new Magazine(rounds);
                previous[c] = new Magazine(rounds);
            }
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
     * Sends a free to the owner of the object's slab: batched per owner for {@link #CACHING}
     * threads, pushed at once otherwise (never blocks).
     */
    void sendRemote(final int owner, final long address) {
        count(REMOTE_SENT, 1);
        if (kind != CACHING) {
            count(REMOTE_BATCHES, 1);
            allocator.deliver(owner, address, address);
            return;
        }
        final int s = owner & (OUT_SLOTS - 1);
        if (outCount[s] != 0 && outOwner[s] != owner) {
            flushSlot(s);
        }
        if (outCount[s] == 0) {
            outOwner[s] = owner;
            outTail[s] = address;
        }
        outHead[s] = RemoteInbox.link(address, outHead[s]);
        if (++outCount[s] >= REMOTE_BATCH) {
            flushSlot(s);
        }
    }

    /** Hands every pending outgoing batch to its owner. */
    void flushOutgoing() {
        for (int s = 0; s < OUT_SLOTS; s++) {
            if (outCount[s] != 0) {
                flushSlot(s);
            }
        }
    }

    /** @return frees waiting in outgoing batches (for the debug invariant and statistics). */
    int pendingOutgoing() {
        int n = 0;
        for (int s = 0; s < OUT_SLOTS; s++) {
            n += outCount[s];
        }
        return n;
    }

    /** Calls {@code action} for every free waiting in an outgoing batch (quiescent use only). */
    void forEachPending(final java.util.function.LongConsumer action) {
        for (int s = 0; s < OUT_SLOTS; s++) {
            long a = outHead[s];
            for (int i = 0; i < outCount[s]; i++) {
                action.accept(a);
                a = RemoteInbox.next(a);
            }
        }
    }

    private void flushSlot(final int s) {
        count(REMOTE_BATCHES, 1);
        allocator.deliver(outOwner[s], outHead[s], outTail[s]);
        outHead[s] = 0;
        outTail[s] = 0;
        outCount[s] = 0;
        outOwner[s] = 0;
    }
}
