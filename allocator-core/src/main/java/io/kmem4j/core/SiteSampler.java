package io.kmem4j.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Allocation-site sampling for leak hunting ({@code siteSampleRate=N}: one allocation in N). A
 * sampled allocation walks the stack to the first frame outside the allocator, {@code java.nio}
 * and the configured {@code siteFramesToSkip} (an agent's own packages), and counts the buffer against that call site until it is released; {@link #outstanding(int)} lists
 * the sites holding the most sampled bytes. At most {@link #MAX_SITES} sites are kept (later ones
 * are counted under {@link #OTHER}), so the memory used is bounded.
 *
 * <p>Threads: any. Sampling decisions are per thread (a countdown in the thread cache), so the
 * fast path pays one decrement when sampling is on and one field test when it is off.
 */
final class SiteSampler {
    static final int MAX_SITES = 1024;
    static final String OTHER = "(other sites: more than " + MAX_SITES + ")";
    private static final StackWalker WALKER = StackWalker.getInstance();

    final int rate;
    /** Class-name prefixes of frames that are not sites: the allocator's, {@code java.nio}'s, the configured ones. */
    private final String[] skipped;
    private final Map<String, Site> sites = new ConcurrentHashMap<>();
    /** Sampled explicit buffers by address (tracked ones carry their site in their release hook). */
    private final Map<Long, Site> explicit = new ConcurrentHashMap<>();

    /**
     * @param rate        one allocation in {@code rate} is sampled
     * @param framesToSkip further class-name prefixes of frames that are not sites (an agent's own)
     */
    SiteSampler(final int rate, final List<String> framesToSkip) {
        this.rate = rate;
        // the classes on the allocation path down to here, and java.nio (the rewritten allocateDirect)
        final List<String> skip = new ArrayList<>(List.of(SlabAllocator.class.getName(), BufferFactory.class.getName(),
            OutOfLine.class.getName(), SharedTier.class.getName(), SiteSampler.class.getName(), "java.nio.",
            "java.lang.invoke.")); // OutOfLine's method-handle frames, shown with -XX:+ShowHiddenFrames
        skip.addAll(framesToSkip);
        this.skipped = skip.toArray(new String[0]);
    }

    /** A call site's sampled figures. */
    static final class Site {
        final String name;
        final LongAdder liveCount = new LongAdder();
        final LongAdder liveBytes = new LongAdder();
        final LongAdder sampled = new LongAdder();

        Site(final String name) {
            this.name = name;
        }

        void released(final int capacity) {
            liveCount.decrement();
            liveBytes.add(-capacity);
        }

        /** The sampled buffer was never handed out (building it failed): as if it had not been sampled. */
        void cancelled(final int capacity) {
            released(capacity);
            sampled.decrement();
        }
    }

    /** Records a sampled allocation of {@code capacity} bytes made by the caller's caller chain. */
    Site record(final int capacity) {
        final String name = WALKER.walk(frames -> frames
            .filter(f -> !skipped(f.getClassName()))
            .findFirst()
            .map(f -> f.getClassName() + "." + f.getMethodName() + "(" + f.getFileName() + ":" + f.getLineNumber() + ")")
            .orElse("(unknown)"));
        Site site = sites.get(name);
        if (site == null) {
            site = sites.size() < MAX_SITES ? sites.computeIfAbsent(name, Site::new)
                : sites.computeIfAbsent(OTHER, Site::new);
        }
        site.sampled.increment();
        site.liveCount.increment();
        site.liveBytes.add(capacity);
        return site;
    }

    /** Frames of the allocator, {@code java.nio} (the rewritten allocateDirect) and the configured prefixes are not sites. */
    private boolean skipped(final String className) {
        for (final String prefix : skipped) {
            if (className.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** Records a sampled explicit buffer at {@code address}: its site counts it until it is freed. */
    void recordExplicit(final long address, final int capacity) {
        final Site site = record(capacity);
        try {
            explicit.put(address, site);
        } catch (final Throwable t) {
            site.cancelled(capacity); // not counted at all, rather than counted for ever
            throw t;
        }
    }

    /** An explicit buffer at {@code address} was freed: release its site's share if it was sampled. */
    void releasedExplicit(final long address, final int capacity) {
        final Site site = explicit.remove(address);
        if (site != null) {
            site.released(capacity);
        }
    }

    /**
     * @param top how many sites
     * @return the sites holding the most sampled live bytes, largest first
     */
    List<SiteStats> outstanding(final int top) {
        final List<SiteStats> out = new ArrayList<>();
        for (final Site s : sites.values()) {
            out.add(new SiteStats(s.name, s.liveCount.sum(), s.liveBytes.sum(), s.sampled.sum(), rate));
        }
        out.sort(Comparator.comparingLong(SiteStats::sampledLiveBytes).reversed());
        return out.subList(0, Math.min(Math.max(top, 0), out.size()));
    }
}
