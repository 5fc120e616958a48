package io.kmem4j.benchmarks;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * One JMH result: a benchmark (short name, {@code Class.method}), its workload parameters
 * ({@link TrialStats#PARAMS}), thread count and allocator, with the primary score and JMH's
 * secondary results (the producer/consumer sides).
 */
record Row(String benchmark, Map<String, String> params, int threads, String allocator, double score, double error,
           String unit, Map<String, Double> secondary) {

    /** @return {@code Class.method} of a fully qualified benchmark name. */
    static String shortName(final String benchmark) {
        final String[] parts = benchmark.split("\\.");
        return parts.length >= 2 ? parts[parts.length - 2] + "." + parts[parts.length - 1] : benchmark;
    }

    static String key(final String shortBenchmark, final String allocator, final Map<String, String> params) {
        return shortBenchmark + "|" + allocator + "|" + params.entrySet().stream().sorted(Map.Entry.comparingByKey())
            .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
    }

    /** @return this row's name for {@link TrialStats}. */
    String key() {
        return key(benchmark, allocator, params);
    }

    /** @return the benchmark class's simple name. */
    String benchmarkClass() {
        return benchmark.split("\\.")[0];
    }

    /** @return the {@code size} parameter, 0 when the workload has none (a size mix). */
    int size() {
        final String s = params.get("size");
        return s == null ? 0 : Integer.parseInt(s);
    }

    /** @return the {@code state} parameter or {@code ""}. */
    String state() {
        return params.getOrDefault("state", "");
    }

    /** @return true when {@code o} is the same benchmark, parameters and thread count (another allocator). */
    boolean sameWorkload(final Row o) {
        return benchmark.equals(o.benchmark) && params.equals(o.params) && threads == o.threads;
    }
}
