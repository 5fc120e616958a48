package io.kmem4j.agent.jmx;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.SiteStats;
import io.kmem4j.core.SlabAllocator;

/**
 * {@link AllocatorMXBean} over a {@link SlabAllocator}. Attributes are served from the
 * {@link StatsSnapshots} snapshot shared with the {@link SlabCacheView}s, so a jconsole refresh of
 * every attribute of every kmem4j bean costs one {@code stats()} call. Threads: any (JMX threads).
 */
public final class AllocatorView implements AllocatorMXBean {
    private final StatsSnapshots snapshots;
    private final Supplier<AllocatorStats> freshStats;
    private final LongSupplier trim;
    private final Map<String, String> configuration;
    private final LongSupplier interceptorFailures;
    private final IntFunction<List<SiteStats>> sites;
    private final int siteSampleRate;
    /** Null when enabled. */
    private final String disabledReason;

    /**
     * A view with a snapshot source of its own.
     *
     * @param allocator           the allocator to show
     * @param configuration       the agent's effective configuration
     * @param interceptorFailures allocations that failed inside kmem4j
     */
    public AllocatorView(final SlabAllocator allocator, final Map<String, String> configuration,
                         final LongSupplier interceptorFailures) {
        this(new StatsSnapshots(allocator::stats), allocator, configuration, interceptorFailures);
    }

    /**
     * @param snapshots           the snapshot source shared with the cache beans (over {@code allocator})
     * @param allocator           the allocator to show
     * @param configuration       the agent's effective configuration
     * @param interceptorFailures allocations that failed inside kmem4j
     */
    public AllocatorView(final StatsSnapshots snapshots, final SlabAllocator allocator,
                         final Map<String, String> configuration, final LongSupplier interceptorFailures) {
        this(snapshots, allocator::stats, allocator::trim, configuration, interceptorFailures,
            allocator::outstandingBySite, allocator.config().siteSampleRate());
    }

    AllocatorView(final StatsSnapshots snapshots, final Supplier<AllocatorStats> freshStats, final LongSupplier trim,
                  final Map<String, String> configuration, final LongSupplier interceptorFailures) {
        this(snapshots, freshStats, trim, configuration, interceptorFailures, top -> List.of(), 0);
    }

    AllocatorView(final StatsSnapshots snapshots, final Supplier<AllocatorStats> freshStats, final LongSupplier trim,
                  final Map<String, String> configuration,
                  final LongSupplier interceptorFailures, final IntFunction<List<SiteStats>> sites,
                  final int siteSampleRate) {
        this(snapshots, freshStats, trim, configuration, interceptorFailures, sites, siteSampleRate, null);
    }

    private AllocatorView(final StatsSnapshots snapshots, final Supplier<AllocatorStats> freshStats,
                          final LongSupplier trim, final Map<String, String> configuration,
                          final LongSupplier interceptorFailures, final IntFunction<List<SiteStats>> sites,
                          final int siteSampleRate, final String disabledReason) {
        this.disabledReason = disabledReason;
        this.sites = sites;
        this.siteSampleRate = siteSampleRate;
        this.snapshots = snapshots;
        this.freshStats = freshStats;
        this.trim = trim;
        this.configuration = configuration;
        this.interceptorFailures = interceptorFailures;
    }

    /**
     * The view of an agent that serves nothing: {@code Enabled=false}, {@code DisabledReason}, every
     * counter 0, no caches; {@code slabinfo()} and {@code outstandingBySite} say that interception is off.
     *
     * @param reason        why interception is off (the agent's WARN or ERROR line)
     * @param configuration the agent's effective configuration
     * @return the view
     */
    public static AllocatorView disabled(final String reason, final Map<String, String> configuration) {
        final AllocatorStats none = AllocatorStats.EMPTY;
        return new AllocatorView(new StatsSnapshots(() -> none), () -> none, () -> 0, configuration, () -> 0,
            top -> List.of(), 0, Objects.requireNonNull(reason, "reason"));
    }

    /** @return the snapshot source this view reads */
    public StatsSnapshots snapshots() {
        return snapshots;
    }

    private AllocatorStats stats() {
        return snapshots.get().stats();
    }

    @Override
    public boolean isEnabled() {
        return disabledReason == null;
    }

    @Override
    public String getDisabledReason() {
        return disabledReason == null ? "" : disabledReason;
    }

    @Override
    public long getAllocations() {
        return stats().allocations();
    }

    @Override
    public long getFrees() {
        return stats().frees();
    }

    @Override
    public long getExplicitFrees() {
        return stats().explicitFrees();
    }

    @Override
    public long getGcFrees() {
        return stats().gcFrees();
    }

    @Override
    public long getLiveBuffers() {
        return stats().liveBuffers();
    }

    @Override
    public long getBytesInUse() {
        return stats().bytesInUse();
    }

    @Override
    public long getBytesReserved() {
        return stats().bytesReserved();
    }

    @Override
    public long getPeakBytesInUse() {
        snapshots.get(); // a read that refreshes also samples the peak
        return snapshots.peakBytesInUse();
    }

    @Override
    public long getPeakLiveBuffers() {
        snapshots.get();
        return snapshots.peakLiveBuffers();
    }

    @Override
    public long getFallbacks() {
        return stats().fallbacks();
    }

    @Override
    public long getRemoteFreesSent() {
        return stats().remoteFreesSent();
    }

    @Override
    public long getRemoteFreesAbsorbed() {
        return stats().remoteFreesAbsorbed();
    }

    @Override
    public long getMagazineHits() {
        return stats().magazineHits();
    }

    @Override
    public long getMagazineMisses() {
        return stats().magazineMisses();
    }

    @Override
    public double getMagazineHitRate() {
        return stats().magazineHitRate();
    }

    @Override
    public int getChunks() {
        return stats().chunks();
    }

    @Override
    public long getChunksAllocated() {
        return stats().chunksAllocated();
    }

    @Override
    public long getChunksReleased() {
        return stats().chunksReleased();
    }

    @Override
    public long getCollectionsBeforeGrowing() {
        return stats().collectionsBeforeGrowing();
    }

    @Override
    public int getThreadCaches() {
        return stats().threadCaches();
    }

    @Override
    public long getDoubleFrees() {
        return stats().doubleFrees();
    }

    @Override
    public long getLeaksDetected() {
        return stats().leaksDetected();
    }

    @Override
    public long getInterceptorFailures() {
        return interceptorFailures.getAsLong();
    }

    @Override
    public int getSlabCaches() {
        return stats().caches().size();
    }

    @Override
    public long getSnapshotSequence() {
        return snapshots.get().sequence();
    }

    @Override
    public String getConfiguration() {
        return configuration.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(","));
    }

    @Override
    public long trim() {
        final long released = trim.getAsLong();
        snapshots.invalidate();
        return released;
    }

    @Override
    public void resetPeaks() {
        snapshots.resetPeaks();
    }

    @Override
    public String outstandingBySite(final int top) {
        if (disabledReason != null) {
            return off();
        }
        if (siteSampleRate == 0) {
            return "allocation-site sampling is off: start the agent with siteSampleRate=N (one allocation in N)\n";
        }
        final StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT,
            "%16s %12s %12s  %s (one allocation in %d sampled)%n", "est. live bytes", "live (smpl)", "allocs (smpl)",
            "site", siteSampleRate));
        for (final SiteStats s : sites.apply(top)) {
            sb.append(String.format(java.util.Locale.ROOT, "%16d %12d %12d  %s%n", s.estimatedLiveBytes(),
                s.sampledLiveBuffers(), s.sampledAllocations(), s.site()));
        }
        return sb.toString();
    }

    @Override
    public String slabinfo() {
        return disabledReason != null ? off() : Slabinfo.format(freshStats.get());
    }

    private String off() {
        return "kmem4j interception is off: " + disabledReason + "\n";
    }
}
