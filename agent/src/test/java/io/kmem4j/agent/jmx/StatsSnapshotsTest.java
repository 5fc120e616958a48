package io.kmem4j.agent.jmx;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.kmem4j.core.AllocatorStats;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StatsSnapshotsTest {
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicReference<AllocatorStats> next = new AtomicReference<>(withLive(10, 1000));
    private final StatsSnapshots snapshots = new StatsSnapshots(() -> {
        calls.incrementAndGet();
        return next.get();
    }, clock::get);

    private static AllocatorStats withLive(final int live, final long bytes) {
        final AllocatorStats s = TestStats.stats(List.of(TestStats.cache(4096, 16, 1, live, live)));
        return new AllocatorStats(s.allocations(), s.explicitFrees(), s.gcFrees(), bytes, s.bytesReserved(),
            s.fallbacks(), s.remoteFreesSent(), s.remoteFreesAbsorbed(), s.remoteBatches(), s.magazineHits(),
            s.magazineMisses(), s.chunks(), s.chunksAllocated(), s.chunksReleased(), s.trims(), s.collectionsBeforeGrowing(),
            s.threadCaches(),
            s.threadCachesRetired(), s.cacheIdsInUse(), s.hookFailures(), s.allocationFailures(), s.leaksDetected(),
            s.doubleFrees(),
            s.caches());
    }

    @Test
    void oneStatsCallPerMaxAge() {
        final StatsSnapshots.Snapshot first = snapshots.get();
        assertThat(first.sequence()).isEqualTo(1);
        clock.addAndGet(StatsSnapshots.MAX_AGE_NANOS);
        assertThat(snapshots.get()).isSameAs(first);
        assertThat(calls).hasValue(1);
        clock.addAndGet(1);
        final StatsSnapshots.Snapshot second = snapshots.get();
        assertThat(second).isNotSameAs(first);
        assertThat(second.sequence()).isEqualTo(2);
        assertThat(calls).hasValue(2);
    }

    @Test
    void invalidateForcesARefresh() {
        snapshots.get();
        snapshots.invalidate();
        assertThat(snapshots.get().sequence()).isEqualTo(2);
    }

    @Test
    void peaksAreSampledAtEachRefreshAndReset() {
        snapshots.get();
        assertThat(snapshots.peakLiveBuffers()).isEqualTo(10);
        assertThat(snapshots.peakBytesInUse()).isEqualTo(1000);

        next.set(withLive(15, 5000));
        clock.addAndGet(StatsSnapshots.MAX_AGE_NANOS + 1);
        snapshots.get();
        next.set(withLive(3, 300));
        clock.addAndGet(StatsSnapshots.MAX_AGE_NANOS + 1);
        snapshots.get();
        assertThat(snapshots.peakLiveBuffers()).isEqualTo(15);
        assertThat(snapshots.peakBytesInUse()).isEqualTo(5000);

        // a peak between two refreshes is not seen: it is a sampled peak
        next.set(withLive(99, 99_000));
        next.set(withLive(4, 400));
        snapshots.resetPeaks();
        assertThat(snapshots.peakLiveBuffers()).isEqualTo(4);
        assertThat(snapshots.peakBytesInUse()).isEqualTo(400);
    }
}
