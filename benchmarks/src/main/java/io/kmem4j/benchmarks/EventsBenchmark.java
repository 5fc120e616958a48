package io.kmem4j.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the JFR {@code io.kmem4j.Fallback} event costs on the one hot path that carries an event:
 * {@code tryAllocate} of a size the slabs do not serve (it counts a fallback, offers the event and
 * returns {@code null}). {@code fallbackDecision} runs that path; {@code noEventBaseline} does the
 * same work without any event code (the size check and the counter). With the event disabled (the
 * default, {@code eventsOff}) the two should match: the JIT folds {@code shouldCommit()} away.
 * {@code eventsOn} forks record the event to show what an enabled event costs. ns/op.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = {Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH})
public class EventsBenchmark {
    private SlabAllocator allocator;
    private final LongAdder baselineCounter = new LongAdder();
    private int tooBig;

    @Setup(Level.Trial)
    public void setUp() {
        allocator = new SlabAllocator(SlabAllocatorConfig.defaults());
        tooBig = allocator.maxCapacity() + 1;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        allocator.close();
    }

    /** The fallback decision with the event code present (disabled unless the fork records it). */
    @Benchmark
    public Object fallbackDecision() {
        return allocator.tryAllocate(tooBig);
    }

    /** The same decision with no event code: size check, counter, null. */
    @Benchmark
    public Object noEventBaseline() {
        if (tooBig > allocator.maxCapacity()) {
            baselineCounter.increment();
            return null;
        }
        return this;
    }

    /** {@link #fallbackDecision()} in a fork that records the event. */
    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH,
        "-XX:StartFlightRecording:filename=/dev/null,+io.kmem4j.Fallback#enabled=true,+io.kmem4j.Fallback#stackTrace=false"})
    public Object fallbackDecisionEventOn() {
        return allocator.tryAllocate(tooBig);
    }
}
