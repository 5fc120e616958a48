package io.kmem4j.benchmarks.programs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The interleaved rounds of one cell of {@code benchmarks/run --netty} (one protocol, JDK, Netty version,
 * size and event-loop count): every arm ran once a round, so a ratio against the better Netty arm is
 * taken within a round, where the machine was alike for all, and the table shows the median over rounds.
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
    /** The arms that are Netty's own allocators (the others are compared with the better of these). */
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
     * @param higherIsBetter whether the better Netty arm is the one with the higher figure (req/s) or the lower (p99, RSS)
     * @return median over rounds of the arm's figure / the better Netty arm's in the same round; NaN when
     *     no round has both
     */
    double ratioToBetterNetty(final String arm, final ToDoubleFunction<ServerRun.Result> figure,
                              final boolean higherIsBetter) {
        return Rounds.median(ratiosToBetterNetty(arm, figure, higherIsBetter));
    }

    /**
     * @return per round with both, the arm's figure / the better Netty arm's in that round (rounds in order)
     * @see #ratioToBetterNetty
     */
    double[] ratiosToBetterNetty(final String arm, final ToDoubleFunction<ServerRun.Result> figure,
                                 final boolean higherIsBetter) {
        final List<Double> ratios = new ArrayList<>();
        for (int r = 0; r < runs(arm).size(); r++) {
            final ServerRun.Result a = runs(arm).get(r);
            double best = Double.NaN;
            for (final String n : NETTY_ARMS) {
                if (!arms.contains(n) || r >= runs(n).size() || !runs(n).get(r).ok()) {
                    continue;
                }
                final double v = figure.applyAsDouble(runs(n).get(r));
                best = Double.isNaN(best) ? v : higherIsBetter ? Math.max(best, v) : Math.min(best, v);
            }
            if (a.ok() && !Double.isNaN(best)) {
                ratios.add(figure.applyAsDouble(a) / best);
            }
        }
        return ratios.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
