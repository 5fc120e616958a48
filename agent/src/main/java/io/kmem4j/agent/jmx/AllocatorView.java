package io.kmem4j.agent.jmx;

import java.util.Map;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.SlabAllocator;

/**
 * {@link AllocatorMXBean} over a {@link SlabAllocator}. Reads are served from a snapshot refreshed
 * when older than 200 ms, so a jconsole refresh of every attribute costs one {@code stats()} call.
 * Threads: any (JMX threads); the snapshot swap is a benign race.
 */
public final class AllocatorView implements AllocatorMXBean {
    private static final long MAX_AGE_NANOS = 200_000_000L;

    private final SlabAllocator allocator;
    private final Map<String, String> configuration;
    private final LongSupplier interceptorFailures;
    private volatile AllocatorStats snapshot;
    private volatile long snapshotNanos;

    /**
     * @param allocator           the allocator to show
     * @param configuration       the agent's effective configuration
     * @param interceptorFailures allocations that failed inside kmem4j
     */
    public AllocatorView(final SlabAllocator allocator, final Map<String, String> configuration,
                         final LongSupplier interceptorFailures) {
        this.allocator = allocator;
        this.configuration = configuration;
        this.interceptorFailures = interceptorFailures;
    }

    private AllocatorStats stats() {
        final long now = System.nanoTime();
        AllocatorStats s = snapshot;
        if (s == null || now - snapshotNanos > MAX_AGE_NANOS) {
            s = allocator.stats();
            snapshot = s;
            snapshotNanos = now;
        }
        return s;
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
    public double getMagazineHitRate() {
        return stats().magazineHitRate();
    }

    @Override
    public int getChunks() {
        return stats().chunks();
    }

    @Override
    public int getThreadCaches() {
        return stats().threadCaches();
    }

    @Override
    public long getInterceptorFailures() {
        return interceptorFailures.getAsLong();
    }

    @Override
    public String getConfiguration() {
        return configuration.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(","));
    }

    @Override
    public long trim() {
        final long released = allocator.trim();
        snapshot = null;
        return released;
    }

    @Override
    public String slabinfo() {
        return Slabinfo.format(allocator.stats(), allocator.config().magazineRounds());
    }
}
