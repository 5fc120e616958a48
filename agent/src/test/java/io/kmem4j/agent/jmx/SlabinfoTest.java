package io.kmem4j.agent.jmx;

import java.util.List;
import java.util.Locale;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlabinfoTest {
    /** The first two lines of Linux's /proc/slabinfo (mm/slab_common.c, print_slabinfo_header). */
    private static final String LINUX_HEADER = "slabinfo - version: 2.1\n"
        + "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit>"
        + " <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n";

    @Test
    void followsProcSlabinfoLayout() {
        final AllocatorStats stats = TestStats.sample();
        final String text = Slabinfo.format(stats);

        assertThat(text).startsWith(LINUX_HEADER).endsWith("\n").doesNotContain("\r");
        final List<String> rows = text.lines().skip(2).toList();
        assertThat(rows).hasSize(stats.caches().size());
        for (int i = 0; i < rows.size(); i++) {
            final CacheStats c = stats.caches().get(i);
            final String row = rows.get(i);
            // "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu"
            assertThat(row).matches("\\S+ +\\d+ +\\d+ +\\d+ +\\d+ +\\d+ : tunables +\\d+ +\\d+ +\\d+ : slabdata +\\d+ +\\d+ +\\d+");
            assertThat(row.substring(0, 17).trim()).isEqualTo(c.name());
            final String[] f = row.split("\\s+");
            assertThat(f[0]).isEqualTo(c.name());
            assertThat(Long.parseLong(f[1])).as("active_objs").isEqualTo(c.activeObjects());
            assertThat(Long.parseLong(f[2])).as("num_objs").isEqualTo(c.totalObjects());
            assertThat(Long.parseLong(f[3])).as("objsize").isEqualTo(c.objectSize());
            assertThat(Long.parseLong(f[4])).as("objperslab").isEqualTo(c.objectsPerSlab());
            assertThat(Long.parseLong(f[5])).as("pagesperslab").isEqualTo(c.pagesPerSlab());
            assertThat(f[6]).isEqualTo(":");
            assertThat(f[7]).isEqualTo("tunables");
            assertThat(Long.parseLong(f[8])).as("limit: this cache's magazine size").isEqualTo(c.magazineRounds());
            assertThat(Long.parseLong(f[9])).as("batchcount").isEqualTo(c.remoteBatch());
            assertThat(Long.parseLong(f[10])).as("sharedfactor").isZero();
            assertThat(f[12]).isEqualTo("slabdata");
            assertThat(Long.parseLong(f[13])).as("active_slabs").isEqualTo(c.slabs());
            assertThat(Long.parseLong(f[14])).as("num_slabs").isEqualTo(c.slabs());
            assertThat(Long.parseLong(f[15])).as("sharedavail").isEqualTo(c.depotObjects());
        }
        // fixed columns, as in Linux: every " : tunables" starts at the same offset
        assertThat(rows.stream().map(r -> r.indexOf(" : tunables")).distinct()).hasSize(1);
    }

    @Test
    void asciiDigitsWhateverTheDefaultLocale() {
        final Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.forLanguageTag("ar-EG-u-nu-arab"));
            assertThat(Slabinfo.format(TestStats.sample())).isEqualTo(withRootLocale());
        } finally {
            Locale.setDefault(saved);
        }
    }

    private static String withRootLocale() {
        final Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.ROOT);
            return Slabinfo.format(TestStats.sample());
        } finally {
            Locale.setDefault(saved);
        }
    }
}
