package io.kmem4j.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;

/** The text printed at exit with {@code summary=true}: what scripts read, in every locale. */
class SummaryTest {

    /** The format the summary had with {@code String.format}, in the root locale: the oracle. */
    private static String formatted(final AllocatorStats s) {
        final StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "[kmem4j] summary: allocations=%d frees=%d (explicit=%d, gc=%d) live=%d"
                + " bytesInUse=%d bytesReserved=%d fallbacks=%d collectionsBeforeGrowing=%d%n", s.allocations(), s.frees(),
            s.explicitFrees(), s.gcFrees(), s.liveBuffers(), s.bytesInUse(), s.bytesReserved(), s.fallbacks(),
            s.collectionsBeforeGrowing()));
        sb.append(String.format(Locale.ROOT, "[kmem4j] summary: remoteFreesSent=%d remoteFreesAbsorbed=%d"
                + " magazineHitRate=%.1f%% chunks=%d threadCaches=%d (retired %d)%n", s.remoteFreesSent(),
            s.remoteFreesAbsorbed(), 100 * s.magazineHitRate(), s.chunks(), s.threadCaches(), s.threadCachesRetired()));
        boolean header = false;
        for (final CacheStats c : s.caches()) {
            if (c.allocations() == 0) {
                continue;
            }
            if (!header) {
                header = true;
                sb.append(String.format(Locale.ROOT, "[kmem4j] summary: %-14s %10s %10s %8s %8s %10s%n", "cache",
                    "allocs", "active", "slabs", "hit%", "addr-order"));
            }
            sb.append(String.format(Locale.ROOT, "[kmem4j] summary: %-14s %10d %10d %8d %7.1f%% %10.2f%n", c.name(),
                c.allocations(), c.activeObjects(), c.slabs(), 100 * c.magazineHitRate(), c.addressOrderScore()));
        }
        return sb.toString();
    }

    @Test
    void nothingServedPrintsTheCountersAndNoEmptyTable() {
        final String text = AgentInstaller.Summary.format(AllocatorStats.EMPTY);
        assertThat(text).isEqualTo(formatted(AllocatorStats.EMPTY));
        assertThat(text.split(System.lineSeparator())).hasSize(2);
        assertThat(text).contains("magazineHitRate=0.0%").doesNotContain("addr-order");
    }

    @Test
    void servedClassesGetOneRowEachTheSameInEveryLocale() {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().build());
        final Locale before = Locale.getDefault();
        try {
            final List<ByteBuffer> held = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                held.add(a.allocate(64));
                if (i % 3 == 0) {
                    held.add(a.allocate(4096));
                }
            }
            for (int i = 0; i < held.size(); i += 2) {
                a.free(held.get(i));
            }
            final AllocatorStats s = a.stats();
            Locale.setDefault(Locale.GERMANY); // a decimal comma, were a formatter to follow the default locale
            final String text = AgentInstaller.Summary.format(s);
            assertThat(text).isEqualTo(formatted(s));
            final String[] lines = text.split(System.lineSeparator());
            assertThat(lines).hasSize(2 + 1 + 2); // counters, header, two classes
            assertThat(lines[3]).matches(
                "^\\[kmem4j] summary: (\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+([\\d.]+)%\\s+([\\d.]+)\\s*$");
        } finally {
            Locale.setDefault(before);
            a.close();
        }
    }

    @Test
    void fixedRoundsAsTheRootLocaleFormatterDoes() {
        for (final double v : new double[] {0, -0.0, 0.04, 0.05, 0.45, 0.5, 0.95, 0.96, 9.95, 99.95, 99.94, 99.99, 100,
            1.005, 12.345, 0.0049, 0.005, 1e-5, 1.0E7, 9.999999E7, 123456.789, -0.04, -3.26, Double.MIN_VALUE,
            Double.MAX_VALUE, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThat(AgentInstaller.Summary.fixed(new StringBuilder(), v, 1).toString()).as("%s to 1 place", v)
                .isEqualTo(String.format(Locale.ROOT, "%.1f", v));
            assertThat(AgentInstaller.Summary.fixed(new StringBuilder(), v, 2).toString()).as("%s to 2 places", v)
                .isEqualTo(String.format(Locale.ROOT, "%.2f", v));
        }
    }
}
