package io.kmem4j.agent.jmx;

import java.util.Locale;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;

/**
 * Formats statistics in the layout of Linux {@code /proc/slabinfo} (version 2.1, the field widths
 * of {@code mm/slab_common.c}) so people who read {@code slabtop} can read it:
 *
 * <pre>
 * slabinfo - version: 2.1
 * # name            &lt;active_objs&gt; &lt;num_objs&gt; &lt;objsize&gt; &lt;objperslab&gt; &lt;pagesperslab&gt; : tunables &lt;limit&gt; &lt;batchcount&gt; &lt;sharedfactor&gt; : slabdata &lt;active_slabs&gt; &lt;num_slabs&gt; &lt;sharedavail&gt;
 * kmem4j-4096           12     16   4096     16    1 : tunables   32   32    0 : slabdata      1      1      0
 * </pre>
 *
 * Pages are kmem4j's 64 KiB pages; the tunables columns show each cache's own magazine size
 * (limit: {@link CacheStats#magazineRounds()}, smaller for large objects), its remote-free batch
 * (batchcount: {@link CacheStats#remoteBatch()}) and 0 (sharedfactor); like SLUB, active_slabs equals num_slabs;
 * sharedavail is the number of objects waiting in the depot. Lines end with {@code \n} whatever
 * the platform, and numbers are plain ASCII whatever the default locale.
 */
public final class Slabinfo {
    /** The first line. */
    public static final String VERSION_LINE = "slabinfo - version: 2.1";
    /** The column header, as in Linux. */
    public static final String HEADER = "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
        + " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>";
    private Slabinfo() {
    }

    /**
     * @param stats a snapshot
     * @return the version line, the header and one line per cache, each ending with {@code \n}
     */
    public static String format(final AllocatorStats stats) {
        final StringBuilder sb = new StringBuilder(256 + 128 * stats.caches().size());
        sb.append(VERSION_LINE).append('\n');
        sb.append(HEADER).append('\n');
        for (final CacheStats c : stats.caches()) {
            sb.append(String.format(Locale.ROOT, "%-17s %6d %6d %6d %4d %4d : tunables %4d %4d %4d : slabdata %6d %6d %6d",
                c.name(), c.activeObjects(), c.totalObjects(), c.objectSize(), c.objectsPerSlab(), c.pagesPerSlab(),
                c.magazineRounds(), c.remoteBatch(), 0, c.slabs(), c.slabs(), c.depotObjects())).append('\n');
        }
        return sb.toString();
    }
}
