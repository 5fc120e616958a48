package io.kmem4j.core;

import java.nio.ByteBuffer;

/**
 * Turns a block into a buffer: zeroes it (unless frees zero), builds the root
 * {@code DirectByteBuffer} over it with the JDK's mapped-buffer constructor ({@link JdkInternals})
 * — a tracked buffer with a JDK cleaner (with the owned lifecycle, a cleaner outside the JDK's list
 * kept in the object's slab slot, whose thunk is the slot's {@link SlotRelease}: {@link JdkCleaners};
 * else a cleaner in the JDK's list with a {@link Release} hook),
 * an explicit one with no cleaner — and registers it with leak detection and site sampling when
 * those are on.
 *
 * <p>Failure atomic: when building throws (the heap exhausted by the buffer, its cleaner or its
 * registration; a throwing constructor), whatever was registered is undone and the block goes back
 * to where it was taken from, so nothing leaks and nothing is counted twice; the JDK then serves the
 * request.
 *
 * <p>Threads: any; {@code tc} is the calling thread's cache.
 */
final class BufferFactory {
    private final SlabAllocator allocator;
    private final PageHeap pages;
    private final boolean zeroOnFree;
    private final BufferConstructor constructor;
    /** Non-null when explicit buffers are watched for leaks. */
    private final LeakDetector leakDetector;
    /** Non-null when allocation sites are sampled. */
    private final SiteSampler sampler;

    /**
     * @param allocator    whose free path the release hooks call
     * @param pages        where the blocks live (the owned lifecycle keeps cleaners in their slabs)
     * @param zeroOnFree   objects wait all-zero: do not zero on allocation
     * @param constructor  the JDK's constructor (tests pass one that fails)
     * @param leakDetector or {@code null}
     * @param sampler      or {@code null}
     */
    BufferFactory(final SlabAllocator allocator, final PageHeap pages, final boolean zeroOnFree,
                  final BufferConstructor constructor, final LeakDetector leakDetector, final SiteSampler sampler) {
        this.allocator = allocator;
        this.pages = pages;
        this.zeroOnFree = zeroOnFree;
        this.constructor = constructor;
        this.leakDetector = leakDetector;
        this.sampler = sampler;
    }

    /**
     * Builds a buffer over a block a {@link ThreadCache#CACHING} thread popped from its loaded
     * magazine; when that fails the block goes back on top of that magazine (it has room).
     *
     * @return the buffer, or {@code null} when building failed (nothing changed)
     */
    ByteBuffer build(final ThreadCache tc, final int cls, final long address, final int capacity, final boolean tracked) {
        try {
            return newBuffer(tc, address, capacity, tracked);
        } catch (final Throwable t) {
            tc.keep(cls, address);
            return null;
        }
    }

    /**
     * Zeroes the block (unless frees zero), builds the buffer over it and registers it. When it throws,
     * what it registered is undone: no sampled site counts the buffer, no leak registration remains.
     */
    ByteBuffer newBuffer(final ThreadCache tc, final long address, final int capacity, final boolean tracked) {
        if (!zeroOnFree) {
            Zeroing.zero(address, capacity);
        }
        if (tracked) {
            // owned lifecycle: the cleaner is kept out of the JDK's list, by the object's slot in its slab
            final Slab s = OwnedLifecycle.enabled() ? tc.slabOf(address, pages) : null;
            if (s == null || !s.keepsCleaners()) {
                final Release hook = hook(tc, address, capacity);
                try {
                    return constructor.newBuffer(capacity, address, hook); // the JDK registers its cleaner
                } catch (final Throwable t) {
                    hook.cancel();
                    throw t;
                }
            }
            final int index = s.indexOf(address);
            final SlotRelease slot = s.hook(index, allocator);
            final SiteSampler.Site site = sampled(tc, capacity);
            try {
                final ByteBuffer b = constructor.newBuffer(capacity, address, null);
                s.arm(index, JdkCleaners.build(b, site == null ? slot : new SlotRelease.Sampled(slot, site, capacity)), capacity);
                return b;
            } catch (final Throwable t) {
                if (site != null) {
                    site.cancelled(capacity);
                }
                // the slot was not armed (arm cannot throw): the cleaner built, unreachable, never runs
                throw t;
            }
        }
        final ByteBuffer b = constructor.newBuffer(capacity, address, null);
        if (leakDetector != null || sampler != null) {
            watchExplicit(tc, b, address, capacity);
        }
        return b;
    }

    /** Registers an explicit buffer with leak detection and site sampling, both or neither. */
    private void watchExplicit(final ThreadCache tc, final ByteBuffer b, final long address, final int capacity) {
        if (leakDetector != null) {
            leakDetector.track(b, address, capacity);
        }
        if (sampler != null && --tc.sampleCountdown <= 0) {
            // the shared tier's countdown is racy; it only decides which allocation is sampled
            tc.sampleCountdown = sampler.rate;
            try {
                sampler.recordExplicit(address, capacity);
            } catch (final Throwable t) {
                if (leakDetector != null) {
                    leakDetector.untrack(address);
                }
                throw t;
            }
        }
    }

    /** The release hook of a tracked buffer in the JDK's list; a sampled one also carries its allocation site. */
    private Release hook(final ThreadCache tc, final long address, final int capacity) {
        final SiteSampler.Site site = sampled(tc, capacity);
        if (site != null) {
            try {
                return new Release.Sampled(allocator, address, capacity, site);
            } catch (final Throwable t) {
                site.cancelled(capacity);
                throw t;
            }
        }
        return new Release(allocator, address, capacity);
    }

    /** @return the site this tracked allocation is recorded at when sampling picks it, else {@code null} */
    private SiteSampler.Site sampled(final ThreadCache tc, final int capacity) {
        if (sampler != null && --tc.sampleCountdown <= 0) {
            tc.sampleCountdown = sampler.rate;
            return sampler.record(capacity);
        }
        return null;
    }
}
