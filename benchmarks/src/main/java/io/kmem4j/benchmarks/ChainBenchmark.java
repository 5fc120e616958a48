package io.kmem4j.benchmarks;

import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.agrona.UnsafeApi;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Chain traversal after random churn (address-ordered allocation against LIFO freelists): a hash chain whose
 * nodes are small direct buffers, linked through their own memory, is walked; how fast depends on
 * whether consecutive nodes sit next to each other in memory. A LIFO free list hands objects back
 * in the order they were freed, so after random frees consecutive allocations scatter; kmem4j's
 * bitmap refills and sorted magazines hand out the lowest free addresses first.
 *
 * <p><b>Workload</b> (the experiment on hash chains after random frees, with direct buffers). {@value #NODES} nodes of
 * {@code size} bytes are allocated and linked in allocation order: the first 8 bytes of each node
 * hold the next node's address (an intrusive list, like {@code hlist_node}). {@code fresh}: the
 * first allocation from a new allocator. {@code churned}: as the seed does, all nodes are freed in
 * random order (passes over the list freeing each node with probability 1/2, until none is left),
 * then {@value #NODES} nodes are allocated and linked anew. One operation visits one node (reads its
 * link and one payload byte); a traversal of the whole chain is one invocation.
 *
 * <p>Reported beside the score: the share of links that point forward by less than 4 KiB
 * ({@code nearLinks}: the next node is on the same or the next page).
 *
 * <p><b>Units.</b> ns per node visited; lower is better.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION})
public class ChainBenchmark {
    /** Nodes in the chain (4 MiB of 64-byte nodes: more than the L2 cache). */
    static final int NODES = 1 << 16;

    /** The allocator and the chain. */
    @State(Scope.Thread)
    public static class AllocatorState {
        /** Node size, bytes. */
        @Param({"64"})
        public int size;

        /** {@code fresh} or {@code churned} (see the class comment). */
        @Param({"fresh", "churned"})
        public String state;

        /** Flavour name, see {@link Flavour}. */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "unsafe", "floor"})
        public String allocator;

        Flavour flavour;
        Ring ring;
        long head;
        double nearLinks;

        @Setup(Level.Trial)
        public void setUp() {
            if (!state.equals("fresh") && !state.equals("churned")) {
                throw new IllegalArgumentException("state=" + state + ", expected fresh or churned");
            }
            flavour = Flavour.create(allocator, size, 1, NODES);
            ring = flavour.newRing(NODES);
            ring.fill(size);
            if (state.equals("churned")) {
                final SplittableRandom r = new SplittableRandom(1);
                int left = NODES;
                while (left > 0) {
                    for (int i = 0; i < NODES; i++) {
                        if (ring.occupied(i) && r.nextBoolean()) {
                            ring.release(i);
                            left--;
                        }
                    }
                }
                ring.fill(size);
            }
            int near = 0;
            for (int i = 0; i < NODES; i++) {
                final long a = ring.address(i);
                final long next = i + 1 < NODES ? ring.address(i + 1) : 0;
                UnsafeApi.putLong(a, next);
                UnsafeApi.putByte(a + 8, (byte) i);
                if (next > a && next - a < 4096) {
                    near++;
                }
            }
            head = ring.address(0);
            nearLinks = (double) near / (NODES - 1);
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) {
            ring.releaseAll();
            final String s = flavour.stats();
            Flavour.printStats(params, flavour, String.format(Locale.ROOT, "nearLinks=%.3f", nearLinks)
                + (s == null ? "" : " " + s));
            flavour.close();
        }
    }

    /**
     * Walks the whole chain.
     *
     * @param s the chain
     * @return a sum of the payload bytes (keeps the loads)
     */
    @Benchmark
    @OperationsPerInvocation(NODES)
    public long traverse(final AllocatorState s) {
        long sum = 0;
        for (long a = s.head; a != 0; a = UnsafeApi.getLong(a)) {
            sum += UnsafeApi.getByte(a + 8);
        }
        return sum;
    }
}
