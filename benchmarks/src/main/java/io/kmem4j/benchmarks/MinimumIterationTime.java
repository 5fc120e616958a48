package io.kmem4j.benchmarks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The shortest warm-up and measurement iterations a benchmark class's figures mean anything with: the
 * report's {@code --quick} and {@code --full} profiles raise their own iteration times to these for the
 * class ({@code --smoke} keeps its own: it only shows that every benchmark runs). For a workload whose
 * cost comes in cycles longer than the profiles' one-second iterations (collections, and the JDK's
 * {@code System.gc()} at the direct-memory limit, in {@link GcOnlyBenchmark}), each iteration must
 * cover several cycles, or its average measures whichever part of one cycle it happened to fall on.
 *
 * <p>Read by {@link Report} on the benchmark class; JMH itself ignores it (running the benchmark jar
 * directly takes the class's {@code @Warmup} and {@code @Measurement}, which should then say the same).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@interface MinimumIterationTime {
    /** @return the least warm-up iteration time, ms */
    int warmupMillis();

    /** @return the least measurement iteration time, ms */
    int iterationMillis();
}
