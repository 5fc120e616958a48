package io.kmem4j.core;

import java.nio.ByteBuffer;

/**
 * Allocation for threads without a private cache (virtual threads): one object at a time from the
 * cache's shared magazine, under the cache's lock (refilled from the depot or the lowest shared
 * slab). A virtual thread's frees are deferred like the GC cleaner's ({@link ThreadCache#SHARED}):
 * a million virtual threads never make a million thread caches.
 *
 * <p>Threads: any thread whose cache is {@link ThreadRegistry#shared}; statistics are counted
 * atomically on that shared cache.
 */
final class SharedTier {
    private final SlabCache[] caches;
    private final SizeClasses classes;
    private final PageHeap pages;
    private final RemoteFrees remote;
    private final ThreadRegistry registry;
    private final BufferFactory buffers;
    private final Accounting accounting;

    SharedTier(final SlabCache[] caches, final SizeClasses classes, final PageHeap pages, final RemoteFrees remote,
               final ThreadRegistry registry, final BufferFactory buffers, final Accounting accounting) {
        this.caches = caches;
        this.classes = classes;
        this.pages = pages;
        this.remote = remote;
        this.registry = registry;
        this.buffers = buffers;
        this.accounting = accounting;
    }

    /** @return a buffer, or {@code null} when the JDK serves this request (counted as a fallback). */
    ByteBuffer allocate(final ThreadCache tc, final int capacity, final boolean tracked) {
        final int cls = classes.indexOf(capacity);
        final SlabCache c = caches[cls];
        long address = 0;
        try {
            while (address == 0) {
                final Chunk[] seen = pages.snapshot();
                c.lock.lock();
                try {
                    address = c.takeOneLocked();
                } finally {
                    c.lock.unlock();
                }
                if (address == 0 && remote.orphans.nonEmpty()) {
                    remote.returnOrphans(registry.reaper); // frees deferred by virtual threads and GC: reuse them before growing
                    continue;
                }
                if (address == 0) {
                    pages.grow(seen); // no lock held: growing may run GC
                }
            }
        } catch (final OutOfMemoryError | SlabCache.RetiredException e) {
            return accounting.fallback(capacity, "budget exhausted or closed"); // the JDK's path reserves with GC and back-off
        }
        final ByteBuffer b;
        try {
            b = buffers.newBuffer(tc, address, capacity, tracked);
        } catch (final Throwable t) {
            giveBack(c, tc, address);
            return accounting.failed(capacity);
        }
        final int base = ThreadCache.classBase(cls);
        tc.count(base + ThreadCache.ALLOCS, 1);
        tc.count(base + ThreadCache.MISSES, 1);
        tc.count(ThreadCache.ALLOC_BYTES, capacity);
        return b;
    }

    /** A failed build: the block goes back on top of the cache's shared magazine. */
    private void giveBack(final SlabCache c, final ThreadCache tc, final long address) {
        try {
            c.lock.lock();
            try {
                c.untakeOneLocked(address, tc);
            } finally {
                c.lock.unlock();
            }
        } catch (final Throwable heapExhausted) {
            remote.orphanMt(tc, address); // allocation-free; counted as a deferred free, never lost
        }
    }
}
