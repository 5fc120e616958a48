package io.kmem4j.agent.jmx;

import java.util.List;

/**
 * {@code kmem4j:type=Netty} (next to {@code kmem4j:type=Allocator}, with the same {@code instance=N}
 * if that one has it): what {@code presets=netty-allocator} did for Netty's pooled and adaptive
 * allocators. Registered only with that preset. Counters are totals since start, read live. The
 * buffers themselves are in the Allocator bean's figures (explicit flavour) and its SlabCache beans.
 * Open types only.
 */
public interface NettyMXBean {
    /** @return Netty direct buffers served from kmem4j's slabs. */
    long getBuffers();

    /**
     * @return of {@link #getBuffers()}: released buffers served again, constructed, to the thread that
     *         released them (no block taken from the slabs: {@code Allocations} of the netty allocator are
     *         {@code Buffers - BuffersReused + Grown})
     */
    long getBuffersReused();

    /**
     * @return bytes of blocks that released buffers keep while they wait for reuse, summed over threads
     *         (at most 1 MiB per thread and 64 MiB in all; an ended thread's go back within one reaper interval). These
     *         blocks count as live in the allocator's figures.
     */
    long getBytesKeptForReuse();

    /** @return requests left to Netty's own allocator (size outside kmem4j's classes, budget, copy left alone, stopped). */
    long getBuffersPassed();

    /** @return growths of kmem4j's Netty buffers served by kmem4j (a growth past the largest class is Netty's). */
    long getGrown();

    /** @return blocks Netty gave back (its release at reference count 0, or the old block of a growth). */
    long getReleases();

    /** @return copies of Netty seen (relocation prefix, version, class loader, base class), one line each. */
    List<String> getCopies();

    /** @return copies of Netty left alone because their classes lack a member kmem4j needs. */
    long getCopiesLeftAlone();

    /** @return {@code newDirectBuffer} methods rewritten so far (a class in two loaders counts twice). */
    long getRewrittenMethods();

    /** @return failures inside kmem4j on Netty's paths (each answered with Netty's own code; the first is logged). */
    long getFailures();
}
