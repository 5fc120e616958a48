package io.kmem4j.benchmarks;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.DataFormatException;

import org.HdrHistogram.Histogram;

/**
 * The {@value Jvm#STATS_PREFIX} lines the forks print at the end of each trial, merged per result
 * row: counters ({@link #SUMMED}) add up over forks, latency histograms merge, anything else is the
 * last fork's value. A row is named by its benchmark, allocator and the workload parameters
 * ({@link #PARAMS}), exactly as {@link Row#key()} names a JMH result.
 */
final class TrialStats {
    /** Workload parameters that name a row (besides the allocator). */
    static final List<String> PARAMS = List.of("size", "state");
    /** Counters summed over forks. */
    static final Set<String> SUMMED = Set.of("gcCount", "gcMillis", "measuredMillis", "outOfMemoryErrors");
    static final String HISTOGRAM = "latencyHist";

    private final Map<String, Map<String, String>> byRow = new LinkedHashMap<>();
    private final Map<String, Histogram> histograms = new LinkedHashMap<>();

    /** Adds one line (the text from the prefix on). */
    void add(final String line) {
        final Map<String, String> kv = new LinkedHashMap<>();
        for (final String tok : line.substring(Jvm.STATS_PREFIX.length()).trim().split("\\s+")) {
            final int eq = tok.indexOf('=');
            if (eq > 0) {
                kv.put(tok.substring(0, eq), tok.substring(eq + 1));
            }
        }
        if (!kv.containsKey("benchmark") || !kv.containsKey("allocator")) {
            return;
        }
        final Map<String, String> params = new LinkedHashMap<>();
        for (final String p : PARAMS) {
            if (kv.containsKey(p)) {
                params.put(p, kv.get(p));
            }
        }
        final String key = Row.key(Row.shortName(kv.get("benchmark")), kv.get("allocator"), params);
        final Map<String, String> merged = byRow.computeIfAbsent(key, k -> new LinkedHashMap<>());
        for (final Map.Entry<String, String> e : kv.entrySet()) {
            if (e.getKey().equals(HISTOGRAM)) {
                final Histogram h = decode(e.getValue());
                if (h != null) {
                    histograms.merge(key, h, (a, b) -> {
                        a.add(b);
                        return a;
                    });
                }
            } else if (SUMMED.contains(e.getKey()) && merged.containsKey(e.getKey())) {
                merged.put(e.getKey(), Long.toString(Long.parseLong(merged.get(e.getKey())) + Long.parseLong(e.getValue())));
            } else {
                merged.put(e.getKey(), e.getValue());
            }
        }
    }

    private static Histogram decode(final String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        } catch (final DataFormatException | RuntimeException e) {
            return null;
        }
    }

    /** @return the merged statistics of {@code row}, empty when none. */
    Map<String, String> of(final Row row) {
        return byRow.getOrDefault(row.key(), Map.of());
    }

    /** @return the merged latency histogram of {@code row}, or {@code null}. */
    Histogram latency(final Row row) {
        return histograms.get(row.key());
    }

    /** @return every row's merged statistics. */
    Iterable<Map<String, String>> all() {
        return byRow.values();
    }

    boolean isEmpty() {
        return byRow.isEmpty();
    }
}
