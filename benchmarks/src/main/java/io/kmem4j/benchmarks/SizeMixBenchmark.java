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
 * A realistic size mix under a varying load: buffer sizes follow {@link SizeMix} (the value sizes of
 * Facebook's memcached ETC pool), and the live set swings between {@value #MIN_LIVE} and
 * {@value #MAX_LIVE} buffers, the way a server's does as load comes and goes.
 *
 * <p><b>Workload.</b> One thread. Starting from {@value #MIN_LIVE} live buffers, each operation is
 * either one allocation (growing phase: the next size of the mix, into a free slot) or one release
 * (draining phase: a random live buffer), switching phase at {@value #MAX_LIVE} and
 * {@value #MIN_LIVE} live. So 384 allocations in a row, then 384 releases in random order: longer
 * runs than a magazine holds, which exercises the depot and the slabs, not only the magazines.
 *
 * <p><b>Units.</b> Average time per operation (one allocation <em>or</em> one release), ns; an
 * allocate-release pair costs twice that. Lower is better.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION})
public class SizeMixBenchmark {
    static final int MIN_LIVE = 128;
    static final int MAX_LIVE = 512;

    /** The allocator and this thread's live set. */
    @State(Scope.Thread)
    public static class AllocatorState {
        /** Flavour name, see {@link Flavour}. */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "kmem4jNetty", "unsafe", "floor"})
        public String allocator;

        Flavour flavour;
        Ring ring;
        final int[] sizes = SizeMix.sizes();
        /** liveSlots[0..live) hold buffers; freeSlots[0..free) are empty. */
        final int[] liveSlots = new int[MAX_LIVE];
        final int[] freeSlots = new int[MAX_LIVE];
        int live;
        int free;
        int next;
        boolean growing = true;
        final XorShift random = new XorShift(0x9E3779B97F4A7C15L);

        @Setup(Level.Trial)
        public void setUp() {
            flavour = Flavour.create(allocator, SizeMix.MAX_BYTES, 1, MAX_LIVE);
            ring = flavour.newRing(MAX_LIVE);
            for (int i = 0; i < MAX_LIVE; i++) {
                freeSlots[free++] = MAX_LIVE - 1 - i;
            }
            while (live < MIN_LIVE) {
                allocateOne();
            }
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) {
            ring.releaseAll();
            flavour.printStats(params);
            flavour.close();
        }

        void allocateOne() {
            final int slot = freeSlots[--free];
            ring.allocate(slot, sizes[next++ & SizeMix.MASK]);
            liveSlots[live++] = slot;
        }

        void releaseOne() {
            final int i = random.nextInt(live);
            final int slot = liveSlots[i];
            liveSlots[i] = liveSlots[--live];
            ring.release(slot);
            freeSlots[free++] = slot;
        }
    }

    /**
     * One allocation (growing) or one release (draining).
     *
     * @param s this thread's live set
     */
    @Benchmark
    public void mix(final AllocatorState s) {
        if (s.growing) {
            s.allocateOne();
            s.growing = s.live < MAX_LIVE;
        } else {
            s.releaseOne();
            s.growing = s.live <= MIN_LIVE;
        }
    }
}
