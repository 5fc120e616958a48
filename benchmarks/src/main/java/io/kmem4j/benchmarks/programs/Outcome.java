package io.kmem4j.benchmarks.programs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The paired rounds of one program in one form on one JDK: each round ran it once without and once
 * with the agent (order alternating), so a ratio is taken within a round, where the machine's load
 * was alike for both, and the report shows the median over rounds.
 *
 * @param jdk     the JDK's label ({@code 17.0.15})
 * @param program the program
 * @param form    its form
 * @param without the runs without the agent, by round
 * @param with    the runs with the agent, by round
 */
record Outcome(String jdk, Program program, Program.Form form, List<ProgramRun.Result> without,
               List<ProgramRun.Result> with) {

    /** @return rounds in which both runs exited 0 */
    int okRounds() {
        return pairs().size();
    }

    /** @return rounds in which either run failed */
    int failedRounds() {
        return without.size() - okRounds();
    }

    private List<int[]> pairs() {
        final List<int[]> ok = new ArrayList<>();
        for (int r = 0; r < Math.min(without.size(), with.size()); r++) {
            if (without.get(r).ok() && with.get(r).ok()) {
                ok.add(new int[] {r});
            }
        }
        return ok;
    }

    /** @return {@code with / without} of a figure in each good round, in round order */
    double[] ratios(final ToDoubleFunction<ProgramRun.Result> figure) {
        return pairs().stream().mapToDouble(p -> figure.applyAsDouble(with.get(p[0]))
            / figure.applyAsDouble(without.get(p[0]))).toArray();
    }

    /** @return median over good rounds of {@code with / without} of a figure; NaN when none */
    double medianRatio(final ToDoubleFunction<ProgramRun.Result> figure) {
        return Rounds.median(ratios(figure));
    }

    /** @return median over good rounds of {@code with - without} of a figure; NaN when none */
    double medianDifference(final ToDoubleFunction<ProgramRun.Result> figure) {
        return Rounds.median(pairs().stream().mapToDouble(p -> figure.applyAsDouble(with.get(p[0]))
            - figure.applyAsDouble(without.get(p[0]))).toArray());
    }

    /** @return median of a figure over the good rounds' runs with ({@code agent}) or without the agent */
    double median(final boolean agent, final ToDoubleFunction<ProgramRun.Result> figure) {
        final List<ProgramRun.Result> runs = agent ? with : without;
        return Rounds.median(pairs().stream().mapToDouble(p -> figure.applyAsDouble(runs.get(p[0]))).toArray());
    }

    /** @return the throughput unit the program printed, or {@code null} */
    String unit() {
        return without.stream().map(ProgramRun.Result::unit).filter(u -> u != null).findFirst().orElse(null);
    }
}
