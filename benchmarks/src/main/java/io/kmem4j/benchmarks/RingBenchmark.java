package io.kmem4j.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The ring: the steady-state cost of one release plus one allocation of a direct buffer of a fixed
 * size, with many buffers live, on each benchmark thread independently.
 *
 * <p><b>Workload.</b> Each benchmark thread owns a ring of {@value #SLOTS} slots, filled with buffers
 * of {@code size} bytes at set-up. One operation picks a slot at random (a per-thread xorshift64,
 * a few instructions), releases the buffer it holds and allocates a new one into it. So the live
 * set is constant (8192 buffers per thread: 2 MiB at 256 B, 32 MiB at 4 KiB, 512 MiB at 64 KiB),
 * every allocation is served while thousands of its size are live, and releases come in random
 * order, which fragments free lists the way a long-running server's do. Allocation and release
 * happen on the same thread (the cross-thread case is {@link ProducerConsumerBenchmark}).
 * Buffers are neither read nor written beyond what the allocator itself does (zeroing).
 *
 * <p><b>Threads.</b> {@link #ring1} runs one thread, {@link #ring2} two at once, each on its own
 * ring against one shared allocator (the {@link AllocatorState}, one per trial): the difference
 * shows contention inside the allocator and the JDK (Bits accounting, the cleaner list lock).
 *
 * <p><b>Flavours.</b> The {@code allocator} parameter; see {@link Flavour}. {@code floor} is the
 * least a tracked-buffer allocator can cost ({@link Floor}); {@code unsafe} is malloc/free with no
 * buffer object at all; {@code kmem4jAgent} is the {@code jdk} code in a fork with the agent. Dropping
 * buffers to GC instead of releasing them is {@link GcOnlyBenchmark}.
 *
 * <p><b>Units.</b> Average time per operation (one release + one allocation) in nanoseconds per
 * thread; lower is better. Buffers still in the rings at tear-down are released before the
 * allocator is closed; kmem4j flavours then print their statistics (magazine hit rate, address
 * order score) on a {@value Jvm#STATS_PREFIX} line.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION})
public class RingBenchmark {
    /** Slots per thread's ring (a power of two). */
    public static final int SLOTS = 8192;
    static final int SLOT_BITS = Integer.numberOfTrailingZeros(SLOTS);

    /** The allocator under test, shared by all benchmark threads of a trial. */
    @State(Scope.Benchmark)
    public static class AllocatorState {
        /** Buffer capacity, bytes. */
        @Param({"256", "4096", "65536"})
        public int size;

        /** Flavour name, see {@link Flavour}. */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "kmem4jTrackedZeroOnAlloc",
            "kmem4jExplicitZeroOnAlloc", "nettyPooled", "nettyAdaptive", "kmem4jNetty", "unsafe", "floor"})
        public String allocator;

        Flavour flavour;
        /** Rings not yet released: JMH may run this state's tear-down before another thread's ring's. */
        final AtomicInteger openRings = new AtomicInteger();

        @Setup(Level.Trial)
        public void setUp(final BenchmarkParams params) {
            flavour = Flavour.create(allocator, size, params.getThreads(), SLOTS);
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (openRings.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            if (openRings.get() > 0) {
                System.out.println("WARNING: " + openRings.get() + " ring(s) still open at the allocator's tear-down");
            }
            flavour.printStats(params);
            flavour.close();
        }
    }

    /** One thread's ring and random-number state. */
    @State(Scope.Thread)
    public static class ThreadRing {
        Ring ring;
        int size;
        XorShift random;
        private AllocatorState owner;

        @Setup(Level.Trial)
        public void setUp(final AllocatorState allocator, final ThreadParams thread) {
            random = new XorShift(0x9E3779B97F4A7C15L * (thread.getThreadIndex() + 1));
            owner = allocator;
            allocator.openRings.incrementAndGet();
            size = allocator.size;
            ring = allocator.flavour.newRing(SLOTS);
            ring.fill(size);
        }

        /** Runs on this ring's thread, which every flavour's release allows. */
        @TearDown(Level.Trial)
        public void tearDown() {
            try {
                ring.releaseAll();
            } finally {
                owner.openRings.decrementAndGet();
            }
        }

        /** @return the next random slot. */
        int nextSlot() {
            return random.nextBits(SLOT_BITS);
        }
    }

    /**
     * One thread: release the buffer in a random slot and allocate a new one there. The new buffer
     * is stored in the ring (a heap array), which already keeps the JIT from eliminating the
     * allocation, so no {@code Blackhole} is needed.
     *
     * @param t this thread's ring
     */
    @Benchmark
    @Threads(1)
    public void ring1(final ThreadRing t) {
        t.ring.replace(t.nextSlot(), t.size);
    }

    /**
     * Two threads at once, each on its own ring, one shared allocator; score is per thread.
     *
     * @param t this thread's ring
     */
    @Benchmark
    @Threads(2)
    public void ring2(final ThreadRing t) {
        t.ring.replace(t.nextSlot(), t.size);
    }
}
