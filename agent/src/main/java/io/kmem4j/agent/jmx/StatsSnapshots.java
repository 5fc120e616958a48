package io.kmem4j.agent.jmx;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.kmem4j.core.AllocatorStats;

/**
 * The one statistics snapshot shared by {@code kmem4j:type=Allocator} and every
 * {@code kmem4j:type=SlabCache} bean: {@code SlabAllocator.stats()} is called at most once per
 * {@link #MAX_AGE_NANOS} however many attributes jconsole or an exporter reads, and attribute reads
 * in between are a volatile read. Each refresh gets a new {@link Snapshot#sequence()}, exposed as the
 * {@code SnapshotSequence} attribute, so a client can tell whether values it read came from the same
 * snapshot.
 *
 * <p>Peaks of {@code bytesInUse} and {@code liveBuffers} are <em>sampled</em>: they are updated on
 * each refresh only, so a peak that came and went between two refreshes (or while nobody read the
 * beans) is not seen.
 *
 * <p>Threads: any. At most one thread refreshes at a time; the others keep reading the previous
 * snapshot meanwhile (it is then at most a few milliseconds older than the limit).
 *
 * @see io.kmem4j.core.SlabAllocator#stats()
 */
public final class StatsSnapshots {
    /** Snapshots older than this are refreshed on the next read (200 ms). */
    public static final long MAX_AGE_NANOS = 200_000_000L;

    /**
     * One snapshot.
     *
     * @param stats    the allocator's statistics
     * @param sequence 1 for the first snapshot, one more for each refresh
     * @param nanos    {@link System#nanoTime()} when it was taken
     */
    public record Snapshot(AllocatorStats stats, long sequence, long nanos) {
    }

    private final Supplier<AllocatorStats> source;
    private final LongSupplier clock;
    /** 1 while a thread refreshes (an AtomicInteger, not an AtomicBoolean: that one makes a VarHandle at start-up). */
    private final AtomicInteger refreshing = new AtomicInteger();
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong peakBytesInUse = new AtomicLong();
    private final AtomicLong peakLiveBuffers = new AtomicLong();
    private final ThreadLocal<Snapshot> pinned = new ThreadLocal<>();
    private volatile Snapshot current;

    /**
     * @param source where statistics come from, e.g. {@code allocator::stats}
     */
    public StatsSnapshots(final Supplier<AllocatorStats> source) {
        this(source, new LongSupplier() { // not System::nanoTime: no lambda spun in premain
            @Override
            public long getAsLong() {
                return System.nanoTime();
            }
        });
    }

    StatsSnapshots(final Supplier<AllocatorStats> source, final LongSupplier clock) {
        this.source = Objects.requireNonNull(source, "source");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** @return the current snapshot, refreshed first when it is older than {@link #MAX_AGE_NANOS} */
    public Snapshot get() {
        final Snapshot pin = pinned.get();
        if (pin != null) {
            return pin;
        }
        final Snapshot s = current;
        if (s != null && clock.getAsLong() - s.nanos() <= MAX_AGE_NANOS) {
            return s;
        }
        if (s == null) {
            return refresh();
        }
        if (!refreshing.compareAndSet(0, 1)) {
            return s; // another thread is refreshing: the previous snapshot is still good enough
        }
        try {
            return refresh();
        } finally {
            refreshing.set(0);
        }
    }

    /** @return a snapshot taken now (also updates the sampled peaks) */
    public Snapshot refresh() {
        final AllocatorStats stats = source.get();
        final Snapshot s = new Snapshot(stats, sequence.incrementAndGet(), clock.getAsLong());
        current = s;
        peakBytesInUse.accumulateAndGet(stats.bytesInUse(), Math::max);
        peakLiveBuffers.accumulateAndGet(stats.liveBuffers(), Math::max);
        return s;
    }

    /**
     * Runs {@code task} with {@link #get()} on this thread answering one snapshot throughout.
     *
     * @param task e.g. reading several attributes
     * @param <T>  its result
     * @return what {@code task} returned
     */
    public <T> T pinned(final Supplier<T> task) {
        if (pinned.get() != null) {
            return task.get();
        }
        pinned.set(get());
        try {
            return task.get();
        } finally {
            pinned.remove();
        }
    }

    /** Drops the current snapshot so the next read takes a fresh one (after {@code trim()}). */
    public void invalidate() {
        current = null;
    }

    /** @return the largest {@code bytesInUse} seen in any snapshot since start or the last reset */
    public long peakBytesInUse() {
        return peakBytesInUse.get();
    }

    /** @return the largest {@code liveBuffers} seen in any snapshot since start or the last reset */
    public long peakLiveBuffers() {
        return peakLiveBuffers.get();
    }

    /** Takes a fresh snapshot and restarts both peaks from its values. */
    public void resetPeaks() {
        final AllocatorStats stats = refresh().stats();
        peakBytesInUse.set(stats.bytesInUse());
        peakLiveBuffers.set(stats.liveBuffers());
    }
}
