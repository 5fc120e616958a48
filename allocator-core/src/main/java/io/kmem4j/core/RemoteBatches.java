package io.kmem4j.core;

/**
 * A thread's outgoing remote frees: up to {@link #SLOTS} batches, one per owner, linked through the
 * freed objects themselves (the first 8 bytes of a freed object hold the next one), each handed to
 * its owner's inbox in one CAS when {@link #BATCH} deep or on the thread's next slow path.
 *
 * <pre>
 *   slot = owner & (SLOTS - 1)    owner[slot]   head ─▶ obj ─▶ obj ─▶ ... ─▶ tail    count[slot]
 * </pre>
 *
 * A free for an owner whose slot holds another owner's batch hands that batch over first. The idea
 * is Linux's deferred free of the 6.18 UDP receive series ({@code skb_attempt_defer_free}: a free
 * goes back to the allocating CPU) and mimalloc's delayed free, batched so that the one atomic
 * operation is paid per batch, not per object.
 *
 * <p>Threads: owned by one thread cache, used only by its thread, or by another while that thread
 * cannot touch it: the reaper after the thread ended or while it revokes an idle thread's cache, and a
 * flush of the GC cleaner thread's batches ({@link Reaper#flushGcBatches}); no field is used by two
 * threads at once: the other thread takes them over through the cache's revocation word and a
 * handshake with the owner ({@link ThreadCache}, "Revocation").
 */
final class RemoteBatches {
    /** Owners a thread batches for at once. */
    static final int SLOTS = 4;
    /** Frees per batch: one CAS hands this many over. */
    static final int BATCH = 32;

    private final RemoteFrees remote;
    private final int[] owner = new int[SLOTS];
    private final long[] head = new long[SLOTS];
    private final long[] tail = new long[SLOTS];
    private final int[] count = new int[SLOTS];

    RemoteBatches(final RemoteFrees remote) {
        this.remote = remote;
    }

    /**
     * Adds a free for {@code to}'s slab.
     *
     * @return batches handed over by this call (0 or 1)
     */
    int add(final int to, final long address) {
        final int s = to & (SLOTS - 1);
        int handed = 0;
        if (count[s] != 0 && owner[s] != to) {
            handOver(s);
            handed++;
        }
        if (count[s] == 0) {
            owner[s] = to;
            tail[s] = address;
        }
        head[s] = RemoteInbox.link(address, head[s]);
        if (++count[s] >= BATCH) {
            handOver(s);
            handed++;
        }
        return handed;
    }

    /** @return batches handed over: every pending one. */
    int flush() {
        int handed = 0;
        for (int s = 0; s < SLOTS; s++) {
            if (count[s] != 0) {
                handOver(s);
                handed++;
            }
        }
        return handed;
    }

    /** @return frees waiting in batches. */
    int pending() {
        int n = 0;
        for (int s = 0; s < SLOTS; s++) {
            n += count[s];
        }
        return n;
    }

    /** Calls {@code action} for every free waiting in a batch (quiescent use only: invariants). */
    void forEachPending(final java.util.function.LongConsumer action) {
        for (int s = 0; s < SLOTS; s++) {
            long a = head[s];
            for (int i = 0; i < count[s]; i++) {
                action.accept(a);
                a = RemoteInbox.next(a);
            }
        }
    }

    private void handOver(final int s) {
        remote.deliverMt(owner[s], head[s], tail[s]);
        head[s] = 0;
        tail[s] = 0;
        count[s] = 0;
        owner[s] = 0;
    }
}
