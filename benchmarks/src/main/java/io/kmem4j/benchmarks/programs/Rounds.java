package io.kmem4j.benchmarks.programs;

import java.util.Arrays;

/**
 * Interleaved rounds, shared by the harnesses: the order of the arms rotates every round, so no arm
 * always runs first (on a warm or a cold machine), and a figure is summarised by its median over rounds.
 */
public final class Rounds {
    private Rounds() {
    }

    /**
     * The order of {@code arms} arms in round {@code round}: a rotation, {@code 0 1 2}, {@code 1 2 0},
     * {@code 2 0 1}, ... (two arms alternate: {@code 0 1}, {@code 1 0}).
     *
     * @return arm indices in the order to run them
     */
    static int[] order(final int arms, final int round) {
        final int[] o = new int[arms];
        for (int k = 0; k < arms; k++) {
            o[k] = (round + k) % arms;
        }
        return o;
    }

    /** @return the median of the finite values, NaN when there are none */
    public static double median(final double[] values) {
        final double[] v = Arrays.stream(values).filter(d -> !Double.isNaN(d) && !Double.isInfinite(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
