package io.kmem4j.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;

/**
 * Base of the per-thread states whose trial reports GC figures (and latencies) over the
 * measurement iterations: JMH runs the inherited iteration set-up and tear-down.
 */
abstract class MeasuredState {
    final Measured measured;

    /** @param latency true to record every operation's latency */
    MeasuredState(final boolean latency) {
        this.measured = new Measured(latency);
    }

    @Setup(Level.Iteration)
    public void iterationStart(final IterationParams iteration) {
        measured.iterationStart(iteration);
    }

    @TearDown(Level.Iteration)
    public void iterationEnd() {
        measured.iterationEnd();
    }
}
