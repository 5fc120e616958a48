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
 * Near the limit: the live set fills 90% of {@code -XX:MaxDirectMemorySize}
 * ({@value Jvm#NEAR_LIMIT_MAX_DIRECT_MIB} MiB in these forks) and one thread releases a random buffer
 * and allocates a new one, as a server does when its buffers almost fill the budget it was given.
 * An allocator that keeps memory in caches, or in chunks it cannot fill, meets the limit here:
 * the JDK's answer is {@code System.gc()} and back-off inside {@code Bits.reserveMemory}, then
 * {@code OutOfMemoryError}.
 *
 * <p><b>Workload.</b> {@code 0.9 * limit / size} slots filled at set-up; one operation is one
 * release plus one allocation in a random slot (explicit release). An {@code OutOfMemoryError}
 * is counted and leaves the slot empty (the next operation on it only allocates), so the run
 * goes on and the count is reported.
 *
 * <p><b>Units.</b> Average time per operation, ns; and, over the measurement iterations only,
 * the latency of every operation (two {@code System.nanoTime()} calls around it, about 25 ns
 * each, included) in an HdrHistogram whose p50/p99/p99.9/max the report prints, the GC count and
 * time (GC MXBeans), and the number of {@code OutOfMemoryError}s.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.NEAR_LIMIT_MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION})
public class NearLimitBenchmark {
    /** Share of {@code MaxDirectMemorySize} the live set fills. */
    static final double FILL = 0.9;

    /** The allocator, this thread's live set and its measurements. */
    @State(Scope.Thread)
    public static class AllocatorState extends MeasuredState {
        /** Buffer capacity, bytes. */
        @Param({"4096"})
        public int size;

        /** Flavour name: any with buffer objects. */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive"})
        public String allocator;

        Flavour flavour;
        Ring ring;
        int slots;
        final XorShift random = new XorShift(0x9E3779B97F4A7C15L);
        long outOfMemory;

        public AllocatorState() {
            super(true);
        }

        @Setup(Level.Trial)
        public void setUp() {
            slots = (int) (FILL * ((long) Jvm.NEAR_LIMIT_MAX_DIRECT_MIB << 20) / size);
            flavour = Flavour.create(allocator, size, 1, slots);
            ring = flavour.newRing(slots);
            for (int i = 0; i < slots; i++) {
                allocate(i);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) {
            ring.releaseAll();
            final String s = flavour.stats();
            Flavour.printStats(params, flavour, measured.stats() + " outOfMemoryErrors=" + outOfMemory + " liveSlots="
                + slots + (s == null ? "" : " " + s));
            flavour.close();
        }

        void allocate(final int slot) {
            try {
                ring.allocate(slot, size);
            } catch (final OutOfMemoryError e) {
                outOfMemory++;
            }
        }
    }

    /**
     * Releases the buffer in a random slot and allocates a new one there, timed.
     *
     * @param s this thread's live set
     */
    @Benchmark
    public void replace(final AllocatorState s) {
        final int slot = s.random.nextInt(s.slots);
        final long t0 = System.nanoTime();
        if (s.ring.occupied(slot)) {
            s.ring.release(slot);
        }
        s.allocate(slot);
        s.measured.record(System.nanoTime() - t0);
    }
}
