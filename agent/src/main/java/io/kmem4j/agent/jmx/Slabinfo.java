package io.kmem4j.agent.jmx;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;

/**
 * Formats statistics in the layout of Linux {@code /proc/slabinfo} (version 2.1) so people who read
 * {@code slabtop} can read it. Pages are kmem4j's 64 KiB pages; the tunables columns show the
 * magazine size (limit), the remote-free batch (batchcount) and 0 (sharedfactor); sharedavail is
 * the number of objects waiting in the depot.
 */
public final class Slabinfo {
    private Slabinfo() {
    }

    /**
     * @param stats          a snapshot
     * @param magazineRounds rounds per magazine, shown as the {@code limit} tunable
     * @return the table, one line per cache, newline-terminated
     */
    public static String format(final AllocatorStats stats, final int magazineRounds) {
        final StringBuilder sb = new StringBuilder(4096);
        sb.append("slabinfo - version: 2.1\n");
        sb.append("# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
            + " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n");
        for (final CacheStats c : stats.caches()) {
            sb.append(String.format("%-17s %6d %6d %6d %4d %4d : tunables %4d %4d %4d : slabdata %6d %6d %6d%n",
                c.name(), c.activeObjects(), c.totalObjects(), c.objectSize(), c.objectsPerSlab(), c.pagesPerSlab(),
                magazineRounds, 32, 0, c.slabs(), c.slabs(), c.depotObjects()));
        }
        return sb.toString();
    }
}
