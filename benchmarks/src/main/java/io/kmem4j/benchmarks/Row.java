package io.kmem4j.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.openjdk.jmh.util.ListStatistics;

/**
 * One JMH result: a benchmark (short name, {@code Class.method}), its workload parameters
 * ({@link TrialStats#PARAMS}), thread count and allocator, with the primary score and JMH's
 * secondary results (the producer/consumer sides), and the measured iterations of each fork in the
 * order the forks ran ({@code forks}: one array per fork) with the round each fork ran in
 * ({@code rounds}, parallel to {@code forks}; {@link #NO_ROUND} for a fork of a run that was not in
 * rounds, such as the forks of one JMH run back to back).
 */
record Row(String benchmark, Map<String, String> params, int threads, String allocator, double score, double error,
           String unit, Map<String, Double> secondary, List<double[]> forks, List<Integer> rounds) {

    /** The round of a fork that did not run in rounds of one fork each. */
    static final int NO_ROUND = -1;

    /**
     * Rows of the same benchmark, parameters, thread count, unit and allocator from several JMH results
     * (one per round) made one: the forks in the order given, the score the mean of every measured
     * iteration and the error JMH's own 99.9 % half-width over them, as JMH reports several forks of one
     * run (a row without iterations counts as one iteration at its score); the secondary results are the
     * means of the rows' finite values. A row found once is kept as JMH wrote it.
     *
     * @param rows in the order they ran
     * @return one row per workload and allocator, in the order first seen
     */
    static List<Row> merge(final List<Row> rows) {
        final Map<String, List<Row>> byKey = new LinkedHashMap<>();
        rows.forEach(r -> byKey.computeIfAbsent(r.key() + "|threads=" + r.threads() + "|" + r.unit(), k -> new ArrayList<>())
            .add(r));
        final List<Row> merged = new ArrayList<>();
        for (final List<Row> same : byKey.values()) {
            if (same.size() == 1) {
                merged.add(same.get(0));
                continue;
            }
            final List<double[]> forks = new ArrayList<>();
            final List<Integer> rounds = new ArrayList<>();
            for (final Row r : same) {
                if (r.forks().isEmpty()) {
                    forks.add(new double[] {r.score()});
                    rounds.add(NO_ROUND);
                } else {
                    forks.addAll(r.forks());
                    rounds.addAll(r.rounds());
                }
            }
            final ListStatistics all = new ListStatistics();
            forks.forEach(f -> {
                for (final double v : f) {
                    if (Double.isFinite(v)) {
                        all.addValue(v);
                    }
                }
            });
            final Map<String, Double> secondary = new LinkedHashMap<>();
            same.forEach(r -> r.secondary().keySet().forEach(k -> secondary.putIfAbsent(k, Double.NaN)));
            secondary.replaceAll((k, none) -> same.stream().map(r -> r.secondary().get(k))
                .filter(v -> v != null && Double.isFinite(v)).mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
            final Row first = same.get(0);
            merged.add(new Row(first.benchmark(), first.params(), first.threads(), first.allocator(),
                all.getN() == 0 ? Double.NaN : all.getMean(), all.getN() < 2 ? Double.NaN : all.getMeanErrorAt(0.999),
                first.unit(), secondary, forks, rounds));
        }
        return merged;
    }

    /**
     * @return round -> the mean of the fork's measured iterations, for forks that ran in a round of their
     *         own (a round seen twice is left out: it cannot be paired)
     */
    Map<Integer, Double> roundScores() {
        final Map<Integer, Double> byRound = new LinkedHashMap<>();
        final java.util.Set<Integer> twice = new java.util.HashSet<>();
        for (int i = 0; i < forks.size(); i++) {
            final int round = rounds.get(i);
            if (round == NO_ROUND) {
                continue;
            }
            final double mean = java.util.Arrays.stream(forks.get(i)).average().orElse(Double.NaN);
            if (byRound.put(round, mean) != null) {
                twice.add(round);
            }
        }
        twice.forEach(byRound::remove);
        return byRound;
    }

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
