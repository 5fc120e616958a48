package io.kmem4j.core;

import java.util.ArrayDeque;

/**
 * A cache's depot (Bonwick and Adams, "Magazines and Vmem", USENIX 2001, section 3.3): the full
 * and the empty magazines a cache keeps between its thread caches and its slabs. A thread whose
 * two magazines are empty trades the empty one for a full one; a thread whose two magazines are
 * full trades the full one for an empty one. Whole magazines move, so one lock acquisition moves
 * {@code magazineRounds} objects.
 *
 * <pre>
 *   thread cache                          depot (under the cache's lock)
 *   loaded  ─┐  both empty: ──empty──▶   empty: [ ][ ][ ] ...  (at most limit + 1 kept)
 *   previous ┘               ◀──full──   full:  [#][#] ...     (at most limit)
 *            both full:      ──full──▶    (refused at the limit: the caller flushes to the slabs)
 *                            ◀──empty──
 * </pre>
 *
 * <p>Threads: every method is called with the owning cache's lock held. Both stacks are sized past
 * their limits at construction, so adding never grows them and an exchange never fails half-way;
 * the only allocation is a new empty magazine when none is kept ({@link #exchangeForEmpty}), done
 * before anything changes.
 */
final class Depot {
    private final ArrayDeque<Magazine> full;
    private final ArrayDeque<Magazine> empty;
    /** Full magazines kept at most ({@code depotMagazines}). */
    private final int limit;
    /** Rounds of a new magazine. */
    private final int rounds;
    /** Magazines moved in or out (statistics; written under the lock, read racily). */
    long exchanges;

    Depot(final int limit, final int rounds) {
        this.limit = limit;
        this.rounds = rounds;
        this.full = new ArrayDeque<>(limit + 2);
        this.empty = new ArrayDeque<>(limit + 3);
    }

    /**
     * Allocation side: trades {@code spent} (an empty magazine) for a full one, sorted so pops ascend
     * in address.
     *
     * @return the full magazine, or {@code null} when the depot has none ({@code spent} stays the caller's)
     */
    Magazine exchangeForFull(final Magazine spent) {
        final Magazine m = full.pollFirst();
        if (m == null) {
            return null;
        }
        exchanges++;
        m.sortForAscendingPops();
        keepEmpty(spent);
        return m;
    }

    /**
     * Free side: trades {@code loaded} (a magazine with rounds) for an empty one.
     *
     * @return an empty magazine, or {@code null} when the depot is at its limit ({@code loaded} stays
     *         the caller's, who flushes it to the slabs)
     * @throws OutOfMemoryError when a new magazine cannot be made (nothing changed)
     */
    Magazine exchangeForEmpty(final Magazine loaded) {
        if (full.size() >= limit) {
            return null;
        }
        final Magazine e = takeEmpty();
        full.addFirst(loaded);
        exchanges++;
        return e;
    }

    /** @return an empty magazine, kept or new. */
    Magazine takeEmpty() {
        final Magazine m = empty.pollFirst();
        return m != null ? m : new Magazine(rounds);
    }

    /** Keeps an empty magazine for a later exchange (at most {@code limit + 1}; more are dropped). */
    void keepEmpty(final Magazine m) {
        if (empty.size() < limit + 1) {
            empty.addFirst(m);
        }
    }

    /** @return a full magazine for flushing to the slabs (trim), or {@code null}; not an exchange. */
    Magazine pollFull() {
        return full.pollFirst();
    }

    /** @return objects held in the full magazines. */
    long objects() {
        long n = 0;
        for (final Magazine m : full) {
            n += m.count;
        }
        return n;
    }
}
