package io.kmem4j.benchmarks;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * What a fork measures beside JMH's score, over its <em>measurement</em> iterations only (warm-up
 * excluded): GC count and time from the {@link GarbageCollectorMXBean}s, and optionally the latency
 * of every operation in an HdrHistogram (1 ns .. 60 s, 3 significant digits). Printed on the trial's
 * {@value Jvm#STATS_PREFIX} line as {@code gcCount gcMillis measuredMillis [latencyHist]}; the
 * histogram travels compressed and base64-encoded so {@code Report} can merge the forks' histograms
 * before taking percentiles.
 *
 * <p>Threads: one per benchmark thread's state; {@link #iterationStart} / {@link #iterationEnd}
 * from JMH's iteration set-up and tear-down, {@link #record} from the benchmark thread.
 */
final class Measured {
    private static final List<GarbageCollectorMXBean> GCS = ManagementFactory.getGarbageCollectorMXBeans();

    private final Histogram latency;
    private boolean measuring;
    private long gcCount;
    private long gcMillis;
    private long measuredNanos;
    private long count0;
    private long millis0;
    private long start;

    /** @param latency true to record a latency histogram ({@link #record}) */
    Measured(final boolean latency) {
        this.latency = latency ? new Histogram(TimeUnit.SECONDS.toNanos(60), 3) : null;
    }

    /** Call from {@code @Setup(Level.Iteration)}. */
    void iterationStart(final IterationParams iteration) {
        measuring = iteration.getType() == IterationType.MEASUREMENT;
        count0 = gcCount();
        millis0 = gcMillis();
        start = System.nanoTime();
    }

    /** Call from {@code @TearDown(Level.Iteration)}. */
    void iterationEnd() {
        if (measuring) {
            measuredNanos += System.nanoTime() - start;
            gcCount += gcCount() - count0;
            gcMillis += gcMillis() - millis0;
        }
        measuring = false;
    }

    /** @return true during a measurement iteration (record latencies only then). */
    boolean measuring() {
        return measuring;
    }

    /** Records one operation's latency, nanoseconds (measurement iterations only). */
    void record(final long nanos) {
        if (measuring) {
            latency.recordValue(Math.min(nanos, latency.getHighestTrackableValue()));
        }
    }

    /** @return {@code key=value} pairs for the trial's statistics line. */
    String stats() {
        final StringBuilder b = new StringBuilder()
            .append("gcCount=").append(gcCount)
            .append(" gcMillis=").append(gcMillis)
            .append(" measuredMillis=").append(TimeUnit.NANOSECONDS.toMillis(measuredNanos));
        if (latency != null) {
            final ByteBuffer buf = ByteBuffer.allocate(latency.getNeededByteBufferCapacity());
            final int n = latency.encodeIntoCompressedByteBuffer(buf);
            b.append(" latencyHist=").append(Base64.getEncoder().encodeToString(
                java.util.Arrays.copyOf(buf.array(), n)));
        }
        return b.toString();
    }

    private static long gcCount() {
        long n = 0;
        for (final GarbageCollectorMXBean g : GCS) {
            n += Math.max(0, g.getCollectionCount());
        }
        return n;
    }

    private static long gcMillis() {
        long n = 0;
        for (final GarbageCollectorMXBean g : GCS) {
            n += Math.max(0, g.getCollectionTime());
        }
        return n;
    }
}
