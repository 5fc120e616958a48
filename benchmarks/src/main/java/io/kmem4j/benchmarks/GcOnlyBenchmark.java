package io.kmem4j.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * GC-only reclamation: buffers are dropped, never released; only GC (and the JDK cleaner it
 * triggers, on the "Reference Handler" thread) gives their memory back. The shape of code that
 * never frees its direct buffers, as most code using {@code allocateDirect} does.
 *
 * <p><b>Workload.</b> The ring of {@link RingBenchmark} on one thread ({@value RingBenchmark#SLOTS}
 * slots filled at set-up), except that the buffer in the random slot is forgotten instead of
 * released. Fork heap 1 GiB, {@code MaxDirectMemorySize} 1 GiB: the limit the JDK gives a program
 * with that heap and no flag. At 256 B young collections find the dropped buffers; at 4 KiB (a
 * heap that sees 100 bytes per 4 KiB of direct memory) the garbage reaches the limit first, where
 * the JDK's {@code Bits.reserveMemory} calls {@code System.gc()} and waits, and kmem4j asks for the
 * same collection and serves from what it freed (or collects earlier, {@code CollectBeforeGrowing}).
 *
 * <p><b>Iterations.</b> 3 x 2 s warm-up and 5 x 4 s measurement; under the report's profiles the
 * profile's iteration counts with at least these times ({@link MinimumIterationTime}: {@code --full} 3 x 2 s
 * and 5 x 4 s, {@code --quick} 1 x 2 s and 3 x 4 s, {@code --smoke} its own 200 and 300 ms). The cost comes
 * in cycles (a collection; the limit and back), and an iteration must cover several of them; the longer
 * warm-up also leaves most of kmem4j's growth (its chunks filling up to the live set plus the garbage
 * between collections) out of the measurement, as the first trip to the limit, new memory for both
 * allocators. Measured on 2026-12-05 (JDK 17): with 1-second iterations at 1 GiB, JMH's error on
 * kmem4j's rows was 1.9-4.9 times the score (the JDK's at 4 KiB 4.3-4.4) and the agent at 256 B read 1.05x and 1.03x the JDK in two rounds; with
 * 4-second iterations the error was 0.2-1.6 times the score and the two rounds agreed within 4 % at
 * 256 B (agent 3.04x and 2.93x); one round at 3 GiB with 4-second iterations left the JDK's error at
 * 4 KiB 3.6 times its score (BENCHMARKS.md, "GC-only: iterations that cover the cycles").
 *
 * <p><b>Allocators.</b> Those whose dropped buffers GC reclaims ({@link Flavour#reclaimedByGc()}):
 * {@code jdk}, {@code kmem4jAgent}, {@code kmem4jTracked}. Netty's pooled and adaptive buffers have
 * no cleaner (a dropped one is never returned to its pool), explicit kmem4j buffers have none by
 * design (see {@code explicitLeakDetection}), and {@code unsafe}/{@code floor} memory has no owner
 * object.
 *
 * <p><b>Units.</b> Average time per operation (one allocation; the GC and cleaner work it causes,
 * also on other cores, is amortised into it), ns. The fork also reports the GC count and time of
 * its measurement iterations.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 4, timeUnit = TimeUnit.SECONDS)
@MinimumIterationTime(warmupMillis = 2000, iterationMillis = 4000)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.GC_ONLY_MAX_DIRECT,
    Jvm.NETTY_NO_LEAK_DETECTION})
public class GcOnlyBenchmark {
    /** The allocator, this thread's ring and its GC figures. */
    @State(Scope.Thread)
    public static class AllocatorState extends MeasuredState {
        /** Buffer capacity, bytes. */
        @Param({"256", "4096"})
        public int size;

        /** Flavour name: one whose dropped buffers GC reclaims. */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked"})
        public String allocator;

        Flavour flavour;
        Ring ring;
        final XorShift random = new XorShift(0x9E3779B97F4A7C15L);

        public AllocatorState() {
            super(false);
        }

        @Setup(Level.Trial)
        public void setUp() {
            flavour = Flavour.create(allocator, size, 1, RingBenchmark.SLOTS);
            if (!flavour.reclaimedByGc()) {
                throw new IllegalArgumentException("allocator=" + allocator + ": GC never reclaims its dropped buffers");
            }
            ring = flavour.newRing(RingBenchmark.SLOTS);
            ring.fill(size);
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) {
            ring.releaseAll();
            final String s = flavour.stats();
            Flavour.printStats(params, flavour, measured.stats() + (s == null ? "" : " " + s));
            flavour.close();
        }
    }

    /**
     * Drops the buffer in a random slot and allocates a new one there.
     *
     * @param s this thread's ring
     */
    @Benchmark
    public void dropped(final AllocatorState s) {
        final int slot = s.random.nextBits(RingBenchmark.SLOT_BITS);
        s.ring.drop(slot);
        s.ring.allocate(slot, s.size);
    }
}
