package io.kmem4j.benchmarks.programs;

import static io.kmem4j.benchmarks.programs.ProgramsTable.fmt;
import static io.kmem4j.benchmarks.programs.ProgramsTable.goalRatio;
import static io.kmem4j.benchmarks.programs.ProgramsTable.ratio;
import static io.kmem4j.benchmarks.programs.ProgramsTable.spread;

import java.util.List;
import java.util.Locale;

/**
 * The markdown of {@code benchmarks/run --netty}: the goals of issue 17 (kmem4j at least as fast as
 * the better Netty allocator, its p99 no higher, RSS 10 s after the burst within 1.25x of the RSS before
 * it), and one table per cell.
 */
final class NettyTable {
    /** Goal: RSS 10 s after the burst / RSS before it. */
    static final double BURST_RATIO = 1.25;
    private static final double MB = 1024 * 1024;
    private static final String KMEM4J = "kmem4j";

    private NettyTable() {
    }

    /** @return the goals table (for every arm not Netty's own; the burst's only where there was one) */
    static String goals(final List<ServerCell> cells) {
        final StringBuilder b = new StringBuilder("| goal | server | JDK | Netty | size | event loops | measured | target | met? |\n"
            + "|---|---|---|---|---|--:|--:|---|---|\n");
        for (final ServerCell c : cells) {
            for (final String arm : c.arms()) {
                if (ServerCell.NETTY_ARMS.contains(arm)) {
                    continue;
                }
                final double[] rps = c.ratiosToBetterNetty(arm, ServerRun.Result::rps);
                final double[] p99 = c.ratiosToBetterNetty(arm, ServerRun.Result::p99Micros);
                final double[] cpu = c.ratiosToBetterNetty(arm, ServerRun.Result::cpuMicrosPerRequest);
                final double burst = c.median(arm, ServerRun.Result::burstRatio);
                final String better = c.betterNetty();
                row(b, arm + " req/s / better Netty allocator's (" + better + ")", c, spread(rps), "≥ 1.00×",
                    Rounds.median(rps) >= 1.0);
                row(b, arm + " p99 / its p99", c, spread(p99), "≤ 1.00×", Rounds.median(p99) <= 1.0);
                row(b, arm + " server CPU per request / its", c, spread(cpu), "(no goal)", null);
                if (c.runs(arm).stream().anyMatch(ServerRun.Result::burst)) {
                    row(b, arm + " RSS 10 s after the burst / before it", c, ratio(burst), "≤ " + ratio(BURST_RATIO),
                        burst <= BURST_RATIO);
                }
            }
        }
        return b.toString();
    }

    /** @param met null: a figure without a goal */
    private static void row(final StringBuilder b, final String goal, final ServerCell c, final String measured,
                            final String target, final Boolean met) {
        b.append("| ").append(goal).append(" | ").append(c.protocol().label).append(" | ").append(c.jdk()).append(" | ").append(c.netty()).append(" | ")
            .append(c.size()).append(" | ").append(c.threads()).append(" | ").append(measured).append(" | ")
            .append(target).append(" | ").append(met == null ? "—" : met ? "met" : "**missed**").append(" |\n");
    }

    /** @return one cell's heading and table */
    static String table(final ServerCell c) {
        final StringBuilder b = new StringBuilder();
        b.append(c.protocol() == Protocol.HTTP ? "#### Netty " : "#### " + c.protocol().label + ", Netty ").append(c.netty()).append(", JDK ").append(c.jdk()).append(", ").append(c.size())
            .append(", ").append(c.threads()).append(c.threads() == 1 ? " event loop" : " event loops").append("\n\n");
        b.append("| arm | rounds | req/s | × better Netty | p99 ms | × better Netty | server CPU µs/req | GCs (ms)")
            .append(" | RSS under load MB, median (max) | burst RSS MB: before → peak → +2 s → +5 s → +10 s")
            .append(" | +10 s / before | burst still resident at +10 s |\n");
        b.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (final String arm : c.arms()) {
            final int failed = c.runs(arm).size() - c.okRounds(arm);
            b.append("| ").append(arm).append(" | ").append(c.okRounds(arm)).append(failed > 0 ? " (" + failed + " failed)" : "")
                .append(" | ").append(fmt(c.median(arm, ServerRun.Result::rps)))
                .append(" | ").append(ratio(c.ratioToBetterNetty(arm, ServerRun.Result::rps)))
                .append(" | ").append(fmt(c.median(arm, r -> r.p99Micros() / 1000)))
                .append(" | ").append(ratio(c.ratioToBetterNetty(arm, ServerRun.Result::p99Micros)))
                .append(" | ").append(fmt(c.median(arm, ServerRun.Result::cpuMicrosPerRequest)))
                .append(" | ").append(fmt(c.median(arm, ServerRun.Result::gcCount))).append(" (")
                .append(fmt(c.median(arm, ServerRun.Result::gcMillis))).append(")")
                .append(" | ").append(fmt(c.median(arm, r -> r.rssMedian() / MB))).append(" (")
                .append(fmt(c.median(arm, r -> r.rssMax() / MB))).append(")")
                .append(" | ").append(fmt(c.median(arm, r -> r.burst() ? r.rssBefore() / MB : Double.NaN))).append(" → ")
                .append(fmt(c.median(arm, r -> r.burst() ? r.rssPeak() / MB : Double.NaN)));
            for (int i = 0; i < ServerRun.AFTER_BURST_SECONDS.length; i++) {
                final int k = i;
                b.append(" → ").append(fmt(c.median(arm, r -> r.rssAfter(k) / MB)));
            }
            b.append(" | ").append(ratio(c.median(arm, ServerRun.Result::burstRatio)))
                .append(" | ").append(percent(c.median(arm, ServerRun.Result::burstResident))).append(" |\n");
        }
        if (c.arms().contains(KMEM4J) && c.okRounds(KMEM4J) > 0) {
            b.append("\nkmem4j, medians per run at the server's end: ")
                .append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.Buffers")))).append(" Netty buffers from its slabs, ")
                .append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.BuffersPassed")))).append(" left to Netty's own")
                .append(" allocator, ").append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.Grown")))).append(" grown; chunks ")
                .append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.ChunksAllocated")))).append(" allocated, ")
                .append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.ChunksReleased")))).append(" released; magazine hit rate ")
                .append(fmt(c.median(KMEM4J, r -> 100 * r.metric("end", "kmem4j.MagazineHitRate")))).append(" %; failures ")
                .append(fmt(c.median(KMEM4J, r -> r.metric("end", "kmem4j.Failures")))).append(".\n");
        }
        return b.toString();
    }

    private static String percent(final double share) {
        return Double.isNaN(share) ? "—" : String.format(Locale.ROOT, "%.0f %%", share * 100);
    }
}
