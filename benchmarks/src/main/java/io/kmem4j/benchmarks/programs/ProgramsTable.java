package io.kmem4j.benchmarks.programs;

import java.util.List;
import java.util.Locale;

/**
 * The A/B harness's markdown: one table per JDK (medians of paired rounds) and the goals of the
 * "do no harm" issue (every program at least as fast and as lean with the agent as without it;
 * start-up at most 150 ms and 20 MB more; a server that pools its own buffers at most 20 MB more).
 */
public final class ProgramsTable {
    /** Goals: start-up wall and CPU time the agent may add to a hello-world program, ms. */
    static final double STARTUP_MILLIS = 150;
    /** Goals: resident memory the agent may add to hello-world and to a server pooling its own buffers, MB. */
    static final double ADDED_RSS_MB = 20;
    private static final double MB = 1024 * 1024;

    private ProgramsTable() {
    }

    /** @return the per-JDK tables */
    static String results(final List<Outcome> outcomes) {
        final StringBuilder b = new StringBuilder();
        String jdk = null;
        for (final Outcome o : outcomes) {
            if (!o.jdk().equals(jdk)) {
                jdk = o.jdk();
                b.append("\n#### JDK ").append(jdk).append("\n\n");
                b.append("| program | form | rounds | throughput without → with | × | peak RSS MB without → with | ×")
                    .append(" | CPU s without → with | × | wall s without → with | × | kmem4j allocations | fallbacks")
                    .append(" | hit % | reserved at exit MB |\n");
                b.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            }
            final String unit = o.unit();
            b.append("| ").append(o.program().name()).append(" | ").append(o.form().label()).append(" | ")
                .append(o.okRounds()).append(o.failedRounds() > 0 ? " (" + o.failedRounds() + " failed)" : "")
                .append(" | ").append(unit == null ? "—" : fmt(o.median(false, ProgramRun.Result::throughput)) + " → "
                    + fmt(o.median(true, ProgramRun.Result::throughput)) + " " + unit + "/s")
                .append(" | ").append(unit == null ? "—" : ratio(o.medianRatio(ProgramRun.Result::throughput)))
                .append(" | ").append(fmt(o.median(false, r -> r.peakRssBytes() / MB))).append(" → ")
                .append(fmt(o.median(true, r -> r.peakRssBytes() / MB)))
                .append(" | ").append(ratio(o.medianRatio(r -> r.peakRssBytes())))
                .append(" | ").append(fmt(o.median(false, r -> r.cpuMillis() / 1000.0))).append(" → ")
                .append(fmt(o.median(true, r -> r.cpuMillis() / 1000.0)))
                .append(" | ").append(ratio(o.medianRatio(r -> r.cpuMillis())))
                .append(" | ").append(fmt(o.median(false, r -> r.wallMillis() / 1000.0))).append(" → ")
                .append(fmt(o.median(true, r -> r.wallMillis() / 1000.0)))
                .append(" | ").append(ratio(o.medianRatio(r -> r.wallMillis())))
                .append(" | ").append(fmt(o.median(true, r -> r.allocations() < 0 ? Double.NaN : r.allocations())))
                .append(" | ").append(fmt(o.median(true, r -> r.fallbacks() < 0 ? Double.NaN : r.fallbacks())))
                .append(" | ").append(fmt(o.median(true, ProgramRun.Result::hitRate)))
                .append(" | ").append(fmt(o.median(true, r -> r.reservedBytes() < 0 ? Double.NaN : r.reservedBytes() / MB)))
                .append(" |\n");
        }
        return b.toString();
    }

    /** @return the goals table */
    static String goals(final List<Outcome> outcomes) {
        final StringBuilder b = new StringBuilder();
        b.append("| goal | JDK | program | form | measured | target | met? |\n|---|---|---|---|--:|---|---|\n");
        for (final Outcome o : outcomes) {
            if (o.okRounds() == 0) {
                row(b, "ran at all", o, "0 good rounds", "≥ 1", false);
                continue;
            }
            if (o.program().name().equals(Program.HELLO)) {
                final double wall = o.medianDifference(ProgramRun.Result::wallMillis);
                final double cpu = o.medianDifference(ProgramRun.Result::cpuMillis);
                final double rss = o.medianDifference(r -> r.peakRssBytes() / MB);
                row(b, "start-up wall time added", o, signed(wall) + " ms", "≤ " + fmt(STARTUP_MILLIS) + " ms",
                    wall <= STARTUP_MILLIS);
                row(b, "start-up CPU time added", o, signed(cpu) + " ms", "≤ " + fmt(STARTUP_MILLIS) + " ms",
                    cpu <= STARTUP_MILLIS);
                row(b, "start-up RSS added", o, signed(rss) + " MB", "≤ " + fmt(ADDED_RSS_MB) + " MB", rss <= ADDED_RSS_MB);
                continue;
            }
            final double[] t = o.ratios(ProgramRun.Result::throughput);
            row(b, "throughput with / without", o, spread(t), "≥ 1.00×", Rounds.median(t) >= 1.0);
            final double[] rss = o.ratios(r -> r.peakRssBytes());
            row(b, "peak RSS with / without", o, spread(rss), "≤ 1.00×", Rounds.median(rss) <= 1.0);
            if (o.program().name().equals(Program.POOLED_SERVER)) {
                final double added = o.medianDifference(r -> r.peakRssBytes() / MB);
                row(b, "peak RSS added (pools its own buffers)", o, signed(added) + " MB", "≤ " + fmt(ADDED_RSS_MB) + " MB",
                    added <= ADDED_RSS_MB);
            }
        }
        return b.toString();
    }

    private static void row(final StringBuilder b, final String goal, final Outcome o, final String measured,
                            final String target, final boolean met) {
        b.append("| ").append(goal).append(" | ").append(o.jdk()).append(" | ").append(o.program().name()).append(" | ")
            .append(o.form().label()).append(" | ").append(measured).append(" | ").append(target).append(" | ")
            .append(met ? "met" : "**missed**").append(" |\n");
    }

    /** @return the median ratio, then the lowest and highest round's: {@code 0.98× (0.91–1.05×)} */
    public static String spread(final double[] perRound) {
        final double median = Rounds.median(perRound);
        if (perRound.length < 2 || Double.isNaN(median)) {
            return goalRatio(median);
        }
        final double[] sorted = java.util.Arrays.stream(perRound).filter(Double::isFinite).sorted().toArray();
        return goalRatio(median) + " (" + ratio(sorted[0]).replace("×", "") + "–" + ratio(sorted[sorted.length - 1]) + ")";
    }

    /** @return the ratio with two decimals, or four where two would print 1.00× for a ratio that is not 1 (a goal's edge) */
    static String goalRatio(final double r) {
        return r != 1.0 && Math.abs(r - 1.0) < 0.005 ? String.format(Locale.ROOT, "%.4f×", r) : ratio(r);
    }

    static String ratio(final double r) {
        return Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.2f×", r);
    }

    static String signed(final double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%+.0f", v);
    }

    static String fmt(final double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        if (Math.abs(v) >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
