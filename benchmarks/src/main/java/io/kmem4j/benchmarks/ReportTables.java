package io.kmem4j.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import io.kmem4j.benchmarks.programs.ProgramsTable;
import io.kmem4j.benchmarks.programs.Rounds;
import org.HdrHistogram.Histogram;

/**
 * The report's tables, in markdown: one per workload with ns/op and ratios against {@code jdk},
 * {@code nettyPooled} and {@code floor} from the same run plus the workload's own figures, the
 * memory table, and the goals of issue 7 with the measured value and met/missed.
 */
final class ReportTables {
    private static final List<String> BASELINES = List.of("jdk", "nettyPooled", "floor");

    private final List<Row> rows;
    private final TrialStats stats;

    ReportTables(final List<Row> rows, final TrialStats stats) {
        this.rows = rows.stream()
            .sorted(Comparator.comparingInt((Row r) -> classOrder(r.benchmarkClass())).thenComparing(Row::benchmark)
                .thenComparing(Row::state).thenComparingInt(Row::size).thenComparingInt(Row::threads)
                .thenComparingInt(r -> allocatorOrder(r.allocator())))
            .toList();
        this.stats = stats;
    }

    private static int classOrder(final String c) {
        final List<String> order = Report.CLASSES.stream().map(Class::getSimpleName).toList();
        final int i = order.indexOf(c);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private static int allocatorOrder(final String a) {
        final int i = Arrays.asList(Flavour.NAMES).indexOf(a);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    /** @return every workload's table. */
    String tables() {
        final Map<String, List<Row>> byClass = new LinkedHashMap<>();
        rows.forEach(r -> byClass.computeIfAbsent(r.benchmarkClass(), k -> new ArrayList<>()).add(r));
        final StringBuilder b = new StringBuilder();
        for (final Map.Entry<String, List<Row>> e : byClass.entrySet()) {
            b.append("### ").append(e.getKey()).append("\n\n");
            if (e.getKey().equals(MemoryBenchmark.class.getSimpleName())) {
                memoryTable(b, e.getValue());
            } else {
                scoreTable(b, e.getValue());
            }
            b.append('\n');
        }
        if (!rows.isEmpty()) {
            b.append("Ratios (`vs X`) are this row's ns/op over allocator X's in the same workload, parameters and")
                .append(" thread count of this run: below 1.00× is faster. Scores are per thread (each of `ring2`'s")
                .append(" two threads does its own operations).\n");
        }
        return b.toString();
    }

    private void scoreTable(final StringBuilder b, final List<Row> rs) {
        final List<String> bases = BASELINES.stream()
            .filter(base -> rs.stream().anyMatch(r -> r.allocator().equals(base))).toList();
        final boolean state = rs.stream().anyMatch(r -> !r.state().isEmpty());
        final boolean sides = rs.stream().anyMatch(r -> r.secondary().containsKey("produce"));
        final boolean gc = rs.stream().anyMatch(r -> stats.of(r).containsKey("gcCount"));
        final boolean latency = rs.stream().anyMatch(r -> stats.latency(r) != null);
        final boolean oom = rs.stream().anyMatch(r -> stats.of(r).containsKey("outOfMemoryErrors"));
        final boolean near = rs.stream().anyMatch(r -> stats.of(r).containsKey("nearLinks"));
        final List<String> head = new ArrayList<>(List.of("benchmark", "size (B)"));
        if (state) {
            head.add("state");
        }
        head.addAll(List.of("threads", "allocator", "ns/op", "± (99.9%)"));
        bases.forEach(x -> head.add("vs " + x));
        if (sides) {
            head.addAll(List.of("produce ns/op", "consume ns/op"));
        }
        if (latency) {
            head.addAll(List.of("p50 µs", "p99 µs", "p99.9 µs", "max µs"));
        }
        if (gc) {
            head.addAll(List.of("GCs", "GC ms"));
        }
        if (oom) {
            head.add("OOMEs");
        }
        if (near) {
            head.add("near links");
        }
        head.add("kmem4j magazine hit rate");
        header(b, head);
        for (final Row r : rs) {
            final Map<String, String> s = stats.of(r);
            final List<String> cells = new ArrayList<>(List.of(r.benchmark(), r.size() == 0 ? "mix" : "" + r.size()));
            if (state) {
                cells.add(r.state());
            }
            cells.addAll(List.of("" + r.threads(), r.allocator(), fmt(r.score()), fmt(r.error())));
            for (final String base : bases) {
                cells.add(find(r, base).filter(br -> br.score() > 0)
                    .map(br -> String.format(Locale.ROOT, "%.2f×", r.score() / br.score())).orElse("—"));
            }
            if (sides) {
                cells.add(fmt(r.secondary().getOrDefault("produce", Double.NaN)));
                cells.add(fmt(r.secondary().getOrDefault("consume", Double.NaN)));
            }
            if (latency) {
                final Histogram h = stats.latency(r);
                for (final double p : new double[] {50, 99, 99.9, 100}) {
                    cells.add(h == null ? "—" : micros(p == 100 ? h.getMaxValue() : h.getValueAtPercentile(p)));
                }
            }
            if (gc) {
                cells.add(s.getOrDefault("gcCount", "—"));
                cells.add(s.getOrDefault("gcMillis", "—"));
            }
            if (oom) {
                cells.add(s.getOrDefault("outOfMemoryErrors", "—"));
            }
            if (near) {
                cells.add(s.getOrDefault("nearLinks", "—"));
            }
            cells.add(s.getOrDefault("magazineHitRate", ""));
            row(b, cells);
        }
    }

    private void memoryTable(final StringBuilder b, final List<Row> rs) {
        header(b, List.of("allocator", "live MiB", "RSS / live", "reserved / live", "RSS / live after release",
            "reserved / live after release", "burst ms (cold)"));
        for (final Row r : rs) {
            final Map<String, String> s = stats.of(r);
            final double live = num(s.get("liveBytes"));
            row(b, List.of(r.allocator(), String.format(Locale.ROOT, "%.1f", live / (1 << 20)),
                ratio(num(s.get("rssBytes")), live), ratio(num(s.get("reservedBytes")), live),
                ratio(num(s.get("rssAfterReleaseBytes")), live), ratio(num(s.get("reservedAfterReleaseBytes")), live),
                fmt(r.score())));
        }
        b.append("\nRSS is the fork's `VmRSS` growth from just before the burst; reserved is what the allocator holds")
            .append(" from the system (— when it cannot tell). \"After release\": every buffer released, then")
            .append(" idle ").append(MemoryBenchmark.IDLE_MILLIS).append(" ms.\n");
    }

    // ------------------------------------------------------------------------------ goals

    /** @return the goals of issue 7, measured in this run. */
    String goals() {
        final StringBuilder b = new StringBuilder();
        header(b, List.of("goal", "measured", "target", "met?", "from"));
        speedup(b, "tracked 256 B vs JDK", "RingBenchmark.ring1", "256", "kmem4jTracked", "jdk", 1.35);
        speedup(b, "tracked 256 B vs Netty pooled", "RingBenchmark.ring1", "256", "kmem4jTracked", "nettyPooled", 1.3);
        floorRatio(b);
        speedup(b, "tracked 4 KiB vs JDK", "RingBenchmark.ring1", "4096", "kmem4jTracked", "jdk", 1.6);
        speedup(b, "explicit 256 B vs Netty pooled", "RingBenchmark.ring1", "256", "kmem4jExplicit", "nettyPooled", 3);
        scaling(b, "kmem4jTracked");
        scaling(b, "kmem4jExplicit");
        speedup(b, "producer/consumer tracked vs JDK", "ProducerConsumerBenchmark.pc", "4096", "kmem4jTracked", "jdk", 2);
        speedup(b, "GC-only tracked 256 B vs JDK", "GcOnlyBenchmark.dropped", "256", "kmem4jTracked", "jdk", 1.5);
        speedup(b, "GC-only tracked 4 KiB vs JDK", "GcOnlyBenchmark.dropped", "4096", "kmem4jTracked", "jdk", 1.5);
        speedup(b, "GC-only agent 4 KiB vs JDK", "GcOnlyBenchmark.dropped", "4096", "kmem4jAgent", "jdk", 1.5);
        hitRate(b);
        rss(b, "kmem4jTracked");
        rss(b, "kmem4jAgent");
        b.append("\nSpeed-ups are the baseline's ns/op over kmem4j's (higher is better); 2-thread scaling is the")
            .append(" 2-thread total rate over the 1-thread rate (`2 × ring1 / ring2` ns/op). \"n/a\": not in this run. ")
            .append(Ratio.NOTE).append('\n');
        return b.toString();
    }

    /**
     * @return the goals of issue 14 (scaling without the JDK's cleaner lock), measured in this run: each
     *         kmem4j flavour's 2-thread ring against its own 1-thread ring and against the JDK's 2-thread
     *         ring, producer/consumer and GC-only against the JDK. Contention per operation is measured by
     *         {@code benchmarks/run --contention}, not here.
     */
    String scalingGoals() {
        final StringBuilder b = new StringBuilder();
        header(b, List.of("goal", "measured", "target", "met?", "from"));
        for (final String a : List.of("kmem4jTracked", "kmem4jAgent")) {
            scaling(b, a);
            final Optional<Row> k2 = find("RingBenchmark.ring2", "256", 2, a);
            final Optional<Row> j2 = find("RingBenchmark.ring2", "256", 2, "jdk");
            final Ratio v = Ratio.of(j2, k2, 1);
            goal(b, flavour(a) + " 256 B, 2 threads vs JDK, 2 threads", v, "≥ 2.5×", v != null && v.value() >= 2.5,
                "RingBenchmark.ring2 size=256");
        }
        for (final String size : List.of("256", "4096")) {
            speedup(b, "producer/consumer tracked " + size + " B vs JDK", "ProducerConsumerBenchmark.pc", size,
                "kmem4jTracked", "jdk", 2);
        }
        for (final String a : List.of("kmem4jTracked", "kmem4jAgent")) {
            for (final String size : List.of("256", "4096")) {
                speedup(b, "GC-only " + flavour(a) + " " + size + " B vs JDK", "GcOnlyBenchmark.dropped", size, a,
                    "jdk", 1.5);
            }
        }
        b.append("\nRing rates at 2 threads are the total of both threads; \"vs JDK\" is the JDK's ns/op over")
            .append(" kmem4j's in the same run. ").append(Ratio.NOTE).append('\n');
        return b.toString();
    }

    private static String flavour(final String allocator) {
        return allocator.substring(6).toLowerCase(Locale.ROOT);
    }

    private void speedup(final StringBuilder b, final String goal, final String benchmark, final String size,
                         final String allocator, final String base, final double target) {
        final Optional<Row> k = find(benchmark, size, 1, allocator);
        final Optional<Row> j = benchmark.startsWith("ProducerConsumer") ? find(benchmark, size, 2, base)
            : find(benchmark, size, 1, base);
        final Optional<Row> kk = benchmark.startsWith("ProducerConsumer") ? find(benchmark, size, 2, allocator) : k;
        final Ratio v = Ratio.of(j, kk, 1);
        goal(b, goal, v, "≥ " + target + "×", v != null && v.value() >= target, benchmark + " size=" + size);
    }

    private void floorRatio(final StringBuilder b) {
        final Optional<Row> k = find("RingBenchmark.ring1", "256", 1, "kmem4jTracked");
        final Optional<Row> f = find("RingBenchmark.ring1", "256", 1, "floor");
        final Ratio v = Ratio.of(k, f, 1);
        goal(b, "tracked 256 B vs floor (ns ratio)", v, "≤ 1.1×", v != null && v.value() <= 1.1, "RingBenchmark.ring1 size=256");
    }

    private void scaling(final StringBuilder b, final String allocator) {
        final Optional<Row> one = find("RingBenchmark.ring1", "256", 1, allocator);
        final Optional<Row> two = find("RingBenchmark.ring2", "256", 2, allocator);
        final Ratio v = Ratio.of(one, two, 2);
        goal(b, flavour(allocator) + " 256 B: 2 threads vs 1", v, "≥ 1.6×",
            v != null && v.value() >= 1.6, "RingBenchmark.ring1/ring2 size=256");
    }

    private void hitRate(final StringBuilder b) {
        Row worst = null;
        double min = Double.NaN;
        for (final Row r : rows) {
            final String h = stats.of(r).get("magazineHitRate");
            final boolean steady = r.benchmark().startsWith("Ring") || r.benchmark().startsWith("SizeMix")
                || r.benchmark().startsWith("ProducerConsumer");
            if (h != null && steady && r.allocator().startsWith("kmem4j") && !(num(h) >= min)) {
                min = num(h);
                worst = r;
            }
        }
        final Row w = worst;
        b.append("| magazine hit rate (lowest in ring, size mix, producer/consumer) | ")
            .append(w == null ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100 * min)).append(" | ≥ 95% | ")
            .append(w == null ? "n/a" : min >= 0.95 ? "met" : "**missed**").append(" | ")
            .append(w == null ? "" : w.benchmark() + " " + w.allocator() + " size=" + (w.size() == 0 ? "mix" : w.size()))
            .append(" |\n");
    }

    private void rss(final StringBuilder b, final String allocator) {
        final Optional<Row> r = rows.stream().filter(x -> x.benchmark().equals("MemoryBenchmark.burst")
            && x.allocator().equals(allocator)).findFirst();
        final Double v = r.map(x -> num(stats.of(x).get("rssBytes")) / num(stats.of(x).get("liveBytes")))
            .filter(x -> !x.isNaN()).orElse(null);
        b.append("| RSS / live, ").append(allocator).append(" | ")
            .append(v == null ? "n/a" : String.format(Locale.ROOT, "%.2f×", v)).append(" | ≤ 1.25× | ")
            .append(v == null ? "n/a" : v <= 1.25 ? "met" : "**missed**").append(" | MemoryBenchmark (size mix) |\n");
    }

    private static void goal(final StringBuilder b, final String goal, final Ratio v, final String target,
                             final boolean met, final String from) {
        final boolean none = v == null || !Double.isFinite(v.value());
        b.append("| ").append(goal).append(" | ").append(none ? "n/a" : v.text()).append(" | ").append(target)
            .append(" | ").append(none ? "n/a" : met ? "met" : "**missed**").append(" | ").append(from).append(" |\n");
    }

    /**
     * A speed goal's ratio of two rows' ns/op ({@code factor * numerator / denominator}): when both rows
     * have forks of two or more of the same rounds ({@link Report} runs one fork of every benchmark per
     * round), the ratio within each such round and their median, printed with the lowest and the highest;
     * else (a run without rounds, or rounds that do not pair up) the ratio of the scores.
     */
    record Ratio(double value, String text) {
        static final String NOTE = "With two or more rounds a speed goal's figure is the median over rounds of its"
            + " ratio within a round (in brackets the lowest and the highest round's): each round runs one fork of every"
            + " benchmark in turn, so the allocators compared met the same phase of the machine. The tables' \"vs\""
            + " columns are ratios of the scores (means over all rounds).";

        static Ratio of(final Optional<Row> numerator, final Optional<Row> denominator, final double factor) {
            if (numerator.isEmpty() || denominator.isEmpty()) {
                return null;
            }
            final Map<Integer, Double> n = numerator.get().roundScores();
            final Map<Integer, Double> d = denominator.get().roundScores();
            final double[] perRound = n.keySet().stream().filter(d::containsKey)
                .mapToDouble(r -> factor * n.get(r) / d.get(r)).filter(Double::isFinite).toArray();
            if (perRound.length >= 2) {
                return new Ratio(Rounds.median(perRound), ProgramsTable.spread(perRound));
            }
            final double v = factor * numerator.get().score() / denominator.get().score();
            return new Ratio(v, Double.isFinite(v) ? String.format(Locale.ROOT, "%.2f×", v) : "n/a");
        }
    }

    // ------------------------------------------------------------------------------ helpers

    private Optional<Row> find(final Row like, final String allocator) {
        return rows.stream().filter(x -> x.sameWorkload(like) && x.allocator().equals(allocator)).findFirst();
    }

    private Optional<Row> find(final String benchmark, final String size, final int threads, final String allocator) {
        final Predicate<Row> p = x -> x.benchmark().equals(benchmark) && size.equals(x.params().get("size"))
            && x.threads() == threads && x.allocator().equals(allocator);
        return rows.stream().filter(p).findFirst();
    }

    private static void header(final StringBuilder b, final List<String> head) {
        b.append("| ").append(String.join(" | ", head)).append(" |\n|");
        for (final String h : head) {
            b.append(List.of("benchmark", "state", "allocator", "goal", "target", "met?", "from").contains(h)
                ? "---|" : "--:|");
        }
        b.append('\n');
    }

    private static void row(final StringBuilder b, final List<String> cells) {
        b.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }

    private static double num(final String s) {
        try {
            return s == null ? Double.NaN : Double.parseDouble(s);
        } catch (final NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static String ratio(final double x, final double live) {
        return x < 0 || Double.isNaN(x) || !(live > 0) ? "—" : String.format(Locale.ROOT, "%.2f×", x / live);
    }

    private static String micros(final long nanos) {
        final double us = nanos / 1000.0;
        return us >= 100 ? String.format(Locale.ROOT, "%.0f", us) : String.format(Locale.ROOT, "%.2f", us);
    }

    static String fmt(final double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }
}
