package io.kmem4j.benchmarks;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
import org.openjdk.jmh.infra.Control;

/**
 * Producer/consumer: buffers allocated on one thread and released on another, the shape of a
 * server whose I/O thread reads into a buffer that a worker thread finishes with.
 *
 * <p><b>Workload.</b> A JMH group {@code pc} of two threads sharing a bounded single-producer,
 * single-consumer queue (Agrona {@link OneToOneConcurrentArrayQueue}, {@value #QUEUE_CAPACITY}
 * entries). {@link #produce} allocates a buffer of {@code size} bytes and offers it, spinning while
 * the queue is full; {@link #consume} polls one, spinning while the queue is empty, and releases it
 * (waits spin {@value #SPINS_BEFORE_YIELD} times, then yield the core).
 * Every release is therefore a cross-thread free (kmem4j: deferred remote free batches; Netty: back
 * to the arena rather than the thread cache; JDK: the same {@code Bits} accounting and cleaner
 * list as on one thread). Spinning stops when JMH ends the iteration ({@link Control#stopMeasurement}),
 * and buffers left in the queue are released at tear-down.
 *
 * <p><b>Units.</b> Average time per operation in nanoseconds: the group score averages the two
 * threads (an operation is one allocation or one release), and JMH also reports {@code produce}
 * and {@code consume} separately. As the queue couples the two sides, both converge to the cost of
 * the slower side, i.e. the pipeline's time per buffer. Lower is better.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 5, time = 2, timeUnit = TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX, Jvm.PRE_TOUCH, Jvm.MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION})
public class ProducerConsumerBenchmark {
    /** Queue capacity (a power of two). */
    public static final int QUEUE_CAPACITY = 1024;
    private static final int SPINS_BEFORE_YIELD = 100;

    /** The allocator under test, shared by both threads. */
    @State(Scope.Benchmark)
    public static class AllocatorState {
        /** Buffer capacity, bytes. */
        @Param({"256", "4096"})
        public int size;

        /** Flavour name: any flavour with buffer objects (not {@code unsafe} or {@code floor}). */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "kmem4jNetty"})
        public String allocator;

        Flavour flavour;
        /** Every group's queue, drained here: JMH tears this state down before the groups' states. */
        final Queue<Channel> channels = new ConcurrentLinkedQueue<>();

        @Setup(Level.Trial)
        public void setUp(final BenchmarkParams params) {
            flavour = Flavour.create(allocator, size, params.getThreads(), 0);
        }

        /** Runs after every thread has left the measurement loop (JMH's pre-tear-down barrier). */
        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) {
            for (final Channel c : channels) {
                Object b;
                while ((b = c.queue.poll()) != null) {
                    flavour.release(b);
                }
            }
            flavour.printStats(params);
            flavour.close();
        }
    }

    /** The queue between one producer and one consumer. */
    @State(Scope.Group)
    public static class Channel {
        OneToOneConcurrentArrayQueue<Object> queue;

        @Setup(Level.Trial)
        public void setUp(final AllocatorState allocator) {
            queue = new OneToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
            allocator.channels.add(this);
        }
    }

    /**
     * Allocates one buffer and hands it to the consumer.
     *
     * @param a       the allocator
     * @param c       the queue
     * @param control JMH's iteration control
     */
    @Benchmark
    @Group("pc")
    @GroupThreads(1)
    public void produce(final AllocatorState a, final Channel c, final Control control) {
        final Object b = a.flavour.allocate(a.size);
        int spins = 0;
        while (!c.queue.offer(b)) {
            if (control.stopMeasurement) {
                a.flavour.release(b);
                return;
            }
            spins = backOff(spins);
        }
    }

    /**
     * Takes one buffer from the producer and releases it.
     *
     * @param a       the allocator
     * @param c       the queue
     * @param control JMH's iteration control
     */
    @Benchmark
    @Group("pc")
    @GroupThreads(1)
    public void consume(final AllocatorState a, final Channel c, final Control control) {
        Object b;
        int spins = 0;
        while ((b = c.queue.poll()) == null) {
            if (control.stopMeasurement) {
                return;
            }
            spins = backOff(spins);
        }
        a.flavour.release(b);
    }

    /**
     * Spins a little, then yields: with more runnable threads than cores (a busy machine, or the
     * two group threads on two cores next to JMH and GC), pure spinning would burn the other side's
     * time slice.
     */
    private static int backOff(final int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
        return spins + 1;
    }
}
