package io.kmem4j.samples.support;

import java.util.function.BinaryOperator;

import picocli.CommandLine.Option;

/**
 * The {@code --duration} option shared by the samples (a picocli mixin): run the sample's workload
 * again and again, in rounds, until this many seconds have passed, for soak tests. Without it (or
 * with 0) the workload runs once, as before.
 *
 * <p>Threads: {@link #run} runs the rounds one after the other on the calling thread.
 */
public final class Rounds {

    /** One round of a sample's workload. */
    @FunctionalInterface
    public interface Round<R> {
        /** @param round 0 for the first round */
        R run(int round) throws Exception;
    }

    @Option(names = "--duration", defaultValue = "0", paramLabel = "SECONDS",
            description = "Repeat the workload in rounds until this many seconds have passed"
                    + " (0: run it once).")
    private long seconds;

    private int completed;

    /** @return the duration asked for, seconds; 0 means one round */
    public long seconds() {
        return seconds;
    }

    /** @return rounds run by {@link #run} */
    public int completed() {
        return completed;
    }

    /**
     * Runs {@code round} once, or with {@code --duration} until that many seconds have passed (the
     * last round is not cut short), and combines the results. The sample checks that
     * {@code --duration} is not negative before (as a usage error).
     *
     * @throws Exception what a round throws; the rounds stop there
     */
    public <R> R run(Round<R> round, BinaryOperator<R> combine) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        R total = round.run(0);
        completed = 1;
        while (System.nanoTime() - deadline < 0) {
            total = combine.apply(total, round.run(completed));
            completed++;
        }
        return total;
    }
}
