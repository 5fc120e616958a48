package io.kmem4j.benchmarks.programs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The interleaved rounds of one cell of {@code benchmarks/run --netty} (one protocol, JDK, Netty version,
 * size and event-loop count): every arm ran once a round, so a ratio against the better Netty allocator
 * is taken within a round, where the machine was alike for all, and the table shows the median over rounds.
 *
 * @param protocol the server: HTTP or gRPC
 * @param jdk     the JDK's label
 * @param netty   the Netty version's label ({@code 4.2.18.Final}; gRPC's: {@code 4.2.17.Final, grpc-netty-shaded 1.85.1})
 * @param size    {@code small} or {@code mixed}
 * @param threads event-loop threads
 * @param arms    the arms, in the first round's order
 * @param runs    per arm (same order), its runs by round
 */
record ServerCell(Protocol protocol, String jdk, String netty, String size, int threads, List<String> arms, List<List<ServerRun.Result>> runs) {
    /** The arms that are Netty's own allocators (the others are compared with the better of these, {@link #betterNetty}). */
    static final List<String> NETTY_ARMS = List.of("pooled", "adaptive");

    List<ServerRun.Result> runs(final String arm) {
        return runs.get(arms.indexOf(arm));
    }

    /** @return rounds in which the arm's run counts */
    int okRounds(final String arm) {
        return (int) runs(arm).stream().filter(ServerRun.Result::ok).count();
    }

    /** @return the median of a figure over the arm's good runs; NaN when none */
    double median(final String arm, final ToDoubleFunction<ServerRun.Result> figure) {
        return Rounds.median(runs(arm).stream().filter(ServerRun.Result::ok).mapToDouble(figure).toArray());
    }

    /**
     * The better Netty allocator of the cell, as issue 17 words its goals ("at least the better Netty
     * allocator's throughput, at most its p99"): the Netty arm with the higher median req/s; every
     * figure is compared with that one arm's. (Taking in each round, for each figure apart, the better
     * of two noisy Netty arms would compare kmem4j's one sample with the best of two: an arm equal to
     * Netty's would miss two rounds in three.)
     *
     * @return {@code pooled} or {@code adaptive}, or {@code null} when neither has a good run
     */
    String betterNetty() {
        String better = null;
        double best = Double.NaN;
        for (final String n : NETTY_ARMS) {
            if (!arms.contains(n) || okRounds(n) == 0) {
                continue;
            }
            final double rps = median(n, ServerRun.Result::rps);
            if (better == null || rps > best) {
                better = n;
                best = rps;
            }
        }
        return better;
    }

    /**
     * @return median over rounds of the arm's figure / the {@linkplain #betterNetty better Netty
     *     allocator}'s in the same round; NaN when no round has both
     */
    double ratioToBetterNetty(final String arm, final ToDoubleFunction<ServerRun.Result> figure) {
        return Rounds.median(ratiosToBetterNetty(arm, figure));
    }

    /**
     * @return per round with both good, the arm's figure / the {@linkplain #betterNetty better Netty
     *     allocator}'s in that round (rounds in order)
     * @see #ratioToBetterNetty
     */
    double[] ratiosToBetterNetty(final String arm, final ToDoubleFunction<ServerRun.Result> figure) {
        final String better = betterNetty();
        final List<Double> ratios = new ArrayList<>();
        for (int r = 0; better != null && r < runs(arm).size(); r++) {
            final ServerRun.Result a = runs(arm).get(r);
            if (r < runs(better).size() && a.ok() && runs(better).get(r).ok()) {
                ratios.add(figure.applyAsDouble(a) / figure.applyAsDouble(runs(better).get(r)));
            }
        }
        return ratios.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
