package io.kmem4j.core;

import java.util.Arrays;

/**
 * A magazine (Bonwick and Adams, "Magazines and Vmem", USENIX 2001): a stack of up to M object
 * addresses ("rounds").
 *
 * <pre>
 *   rounds: [ a_k | ... | a_2 | a_1 |   free   ]      pop takes rounds[count - 1]
 *             0                 count-1       M
 * </pre>
 *
 * Refills from a slab store the lowest addresses last, so pops hand them out in ascending order
 * (the address-ordered refill of the Linux slab work on LIFO freelist scattering). A magazine is
 * owned by one thread cache, or by a depot under its cache's lock; it is never shared (but for the
 * empty, immutable {@link #NONE}), so {@link #push} and {@link #pop} are plain array operations: no
 * lock, no atomic.
 */
final class Magazine {
    /**
     * The place-holder of a size class a thread has not used yet: no rounds, so it is empty for the
     * allocate hit path and full for the free hit path, and both go to their slow path, which makes
     * the thread's real magazines of that class first ({@link ThreadCache#magazines}). Shared by every
     * thread; nothing is ever pushed onto it, and it never reaches a depot. A thread that allocates
     * from a few classes thus pays for those only (two magazines of every class were some 20 KB of
     * heap per thread: 3,000 threads ran a 32 MB heap out of memory).
     */
    static final Magazine NONE = new Magazine(0);

    final long[] rounds;
    int count;

    Magazine(final int capacity) {
        this.rounds = new long[capacity];
    }

    /**
     * @return the top round; the magazine must not be empty (callers test {@link #isEmpty()} or
     *         {@code count} first: one load and one store)
     */
    long pop() {
        return rounds[--count];
    }

    /** Pushes a round; the magazine must not be full (callers test {@link #isFull()} first). */
    void push(final long address) {
        rounds[count++] = address;
    }

    boolean isEmpty() {
        return count == 0;
    }

    boolean isFull() {
        return count == rounds.length;
    }

    /**
     * Orders the rounds so that pops hand them out in ascending address order: frees arrive in any
     * order, and a magazine coming back for allocation would otherwise replay them LIFO. Slow path
     * only (32 rounds: a few ns per object).
     */
    void sortForAscendingPops() {
        Arrays.sort(rounds, 0, count);
        for (int i = 0, j = count - 1; i < j; i++, j--) {
            final long t = rounds[i];
            rounds[i] = rounds[j];
            rounds[j] = t;
        }
    }
}
