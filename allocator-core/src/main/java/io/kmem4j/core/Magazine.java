package io.kmem4j.core;

/**
 * A magazine (Bonwick and Adams, "Magazines and Vmem", USENIX 2001; seed
 * {@code 002_934624e672fe4af6.txt}): a stack of up to M object addresses ("rounds").
 *
 * <pre>
 *   rounds: [ a_k | ... | a_2 | a_1 |   free   ]      pop takes rounds[count - 1]
 *             0                 count-1       M
 * </pre>
 *
 * Refills from a slab store the lowest addresses last, so pops hand them out in ascending order
 * (seed {@code 001_f6795392cfb9b5c3.txt}). A magazine is owned by one thread cache, or by a depot
 * under its cache's lock; it is never shared.
 */
final class Magazine {
    final long[] rounds;
    int count;

    Magazine(final int capacity) {
        this.rounds = new long[capacity];
    }

    /**
     * Orders the rounds so that pops hand them out in ascending address order (seed
     * {@code 001_f6795392cfb9b5c3.txt}): frees arrive in any order, and a magazine coming back for
     * allocation would otherwise replay them LIFO. Slow path only (32 rounds: a few ns per object).
     */
    void sortForAscendingPops() {
        java.util.Arrays.sort(rounds, 0, count);
        for (int i = 0, j = count - 1; i < j; i++, j--) {
            final long t = rounds[i];
            rounds[i] = rounds[j];
            rounds[j] = t;
        }
    }

    boolean isEmpty() {
        return count == 0;
    }

    boolean isFull() {
        return count == rounds.length;
    }
}
