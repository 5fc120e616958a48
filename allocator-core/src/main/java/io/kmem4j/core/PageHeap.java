package io.kmem4j.core;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Hands out runs of pages for slabs from the allocator's chunks and grows or shrinks the set of
 * chunks.
 *
 * <p>Locks: taking and returning pages is lock-free (CAS on a chunk's page bitmap).
 * {@code growSerializer} is held while one thread reserves a new chunk from the JDK
 * ({@code Bits.tryReserveMemory}: no GC, no sleep) and maps it; no cache lock is ever held then. {@code growLock} is held only to publish or
 * remove a chunk; it may be taken after a cache lock (emptying a slab), never before one.
 */
final class PageHeap {
    private final int chunkBytes;
    private final int retainedEmptyChunks;
    final ChunkMap map;
    /** Serialises reserving new chunks; never held together with a cache lock. */
    final ReentrantLock growSerializer = new ReentrantLock();
    /** Guards publishing and removing chunks; held briefly, may be taken under a cache lock. */
    private final ReentrantLock growLock = new ReentrantLock();
    private volatile Chunk[] chunks = new Chunk[0];
    private long chunksAllocated;
    // under growSerializer
    private long reserveAttempts;
    private volatile OutOfMemoryError lastFailure;
    private volatile long lastFailureNanos;
    /** After a failed reservation, growth is refused at once for this long (requests go to the JDK). */
    private static final long FAILURE_HOLD_NANOS = 100_000_000L;
    private long chunksReleased;
    /** {@link System#nanoTime()} of the last chunk released: a failure before it holds growth back no longer. */
    private volatile long lastReleaseNanos = System.nanoTime() - Long.MAX_VALUE / 2;
    /** {@link System#nanoTime()} of the last successful growth (racy reads: a late value only delays a release). */
    private volatile long lastGrowNanos = System.nanoTime() - Long.MAX_VALUE / 2;

    PageHeap(final int chunkBytes, final int retainedEmptyChunks) {
        this.chunkBytes = chunkBytes;
        this.retainedEmptyChunks = retainedEmptyChunks;
        this.map = new ChunkMap(chunkBytes);
    }

    /**
     * Carves a new slab for {@code cache} from a free run of pages, without growing.
     *
     * @return the slab, or {@code null} when no chunk has a free run: the caller releases its cache
     *         lock, calls {@link #grow(Chunk[])} with {@link #snapshot()} taken before, and retries
     */
    Slab tryNewSlab(final SlabCache cache) {
        for (final Chunk c : chunks) {
            if (c.usedPages() > c.pages - cache.slabPages) {
                continue; // too full for a slab of this class: skip its bitmap (hundreds of full chunks at the limit)
            }
            final int page = c.takePages(cache.slabPages);
            if (page >= 0) {
                return install(c, page, cache);
            }
        }
        return null;
    }

    /** @return the slab holding {@code address}, which must be ours; {@code hint[0]} caches the chunk between calls. */
    Slab slabOf(final long address, final Chunk[] hint) {
        Chunk c = hint[0];
        if (c == null || !c.contains(address)) {
            c = map.find(address);
            hint[0] = c;
        }
        return c.slabs[c.head[c.pageOf(address)]];
    }

    /** @return the slab holding {@code address}, which must be ours. */
    Slab slabOf(final long address) {
        final Chunk c = map.find(address);
        return c.slabs[c.head[c.pageOf(address)]];
    }

    /** @return the cache of the slab holding {@code address}, which must be ours. */
    SlabCache cacheOf(final long address) {
        return map.find(address).cacheOf(address);
    }

    /** @return the current set of chunks, to pass to {@link #grow(Chunk[])}. */
    Chunk[] snapshot() {
        return chunks;
    }

    private static Slab install(final Chunk c, final int headPage, final SlabCache cache) {
        final Slab s = new Slab(c, headPage, cache);
        for (int p = headPage; p < headPage + s.pages; p++) {
            c.head[p] = headPage;
            c.slabs[p] = s;
        }
        c.counters[headPage] = Counters.pack(cache.id, s.objects, 0, false);
        return s;
    }

    /**
     * Adds one chunk unless the set changed since {@code seen} (someone grew or shrank: look again).
     * Must be called with no cache lock held (the threads that would give memory back need those
     * locks). Growers queue on {@code growSerializer}, so a burst of misses adds one chunk, not one per
     * thread; publishing takes {@code growLock} only for a moment.
     *
     * @throws OutOfMemoryError from {@code java.nio.Bits} when the direct-memory budget is exhausted
     */
    void grow(final Chunk[] seen) {
        final long queuedAt = System.nanoTime();
        final OutOfMemoryError recent = lastFailure;
        if (recent != null && queuedAt - lastFailureNanos < FAILURE_HOLD_NANOS && lastReleaseNanos - lastFailureNanos < 0) {
            throw recent; // the budget was exhausted a moment ago, and no chunk went back since: let the JDK's own path serve this one
        }
        // No time-out: the holder never waits inside the JDK (the reservation is a try, not the JDK's GC
        // and back-off), so the wait is one chunk's allocation and zeroing. A time-out here turned
        // scheduler latency (20,000 runnable virtual threads on 2 carriers) into fallbacks.
        // Not interruptible: an interrupted caller keeps its interrupt status and still gets its buffer.
        growSerializer.lock();
        try {
            if (chunks != seen) {
                return;
            }
            // The thread before us failed to reserve while we queued: share its outcome instead of
            // running the JDK's GC-and-back-off loop again (a burst of misses costs one back-off).
            if (lastFailure != null && lastFailureNanos - queuedAt >= 0) {
                throw lastFailure;
            }
            final Chunk c;
            try {
                reserveAttempts++;
                c = Chunk.allocate(chunkBytes);
            } catch (final OutOfMemoryError e) {
                lastFailureNanos = System.nanoTime(); // before the failure: a reader seeing it sees its time
                lastFailure = e;
                throw e;
            }
            // not zeroed: a slab zeroes each object the first time it hands it out (Slab.fill), so memory
            // never used is never touched and stays out of RSS
            growLock.lock();
            try {
                try {
                    map.add(c);
                } catch (final RuntimeException | Error e) {
                    c.release(); // never mapped: nothing of it was handed out
                    throw e;
                }
                final Chunk[] current = chunks;
                final Chunk[] next = java.util.Arrays.copyOf(current, current.length + 1);
                next[current.length] = c;
                chunks = next;
                chunksAllocated++;
                lastGrowNanos = System.nanoTime();
            } finally {
                growLock.unlock();
            }
            if (Events.recorder()) {
                final Events.ChunkGrow e = new Events.ChunkGrow();
                e.bytes = c.reservedBytes;
                e.chunks = chunks.length;
                e.commit();
            }
        } finally {
            growSerializer.unlock();
        }
    }

    /** @return true when a chunk reservation failed (the budget was short) less than {@code nanos} ago. */
    boolean failedWithin(final long nanos) {
        return lastFailure != null && System.nanoTime() - lastFailureNanos < nanos;
    }

    /** @return true when a chunk was added less than {@code nanos} ago. */
    boolean grewWithin(final long nanos) {
        return System.nanoTime() - lastGrowNanos < nanos;
    }

    /** @return true while a thread holds the grow lock or the grow serialiser (tests: nothing may be left held). */
    boolean growLocked() {
        return growLock.isLocked() || growSerializer.isLocked();
    }

    /** @return reservations of a new chunk attempted (successful or not), under the grow serialiser. */
    long reserveAttempts() {
        return reserveAttempts;
    }

    /**
     * Returns a slab's pages. A chunk left empty is not released at once: it is kept for a while
     * (a chunk emptied by one collection is usually needed again a moment later) and released by
     * {@link #releaseDecayedChunks} once it stayed empty, or at once by {@link #releaseEmptyChunks}
     * (trim, budget pressure).
     */
    void freeSlab(final Slab s) {
        final Chunk c = s.chunk;
        for (int p = s.headPage; p < s.headPage + s.pages; p++) {
            c.slabs[p] = null;
        }
        c.counters[s.headPage] = 0L;
        c.returnPages(s.headPage, s.pages);
        if (c.usedPages() == 0) {
            c.emptySinceNanos = System.nanoTime(); // racy: a later empty time only delays the release
        }
    }

    /**
     * Releases the chunks that have been empty for at least {@code decayNanos}, keeping
     * {@code keep} empty chunks (the reaper, every interval: time-based decay, as mimalloc's purge
     * delay and snmalloc's epochs) — but none while the heap grew within the last {@code holdNanos}.
     *
     * <p>The hold is for memory that GC gives back in bursts: a program that drops its buffers sees
     * every collection empty hundreds of chunks at once and fill them again until the next one, a
     * second or more later. Releasing them in between and growing again maps fresh memory, whose
     * first touch costs a page fault per 4 KiB (about 2 µs on the 2-core VMs of BENCHMARKS.md, and
     * several times that once the host must back new memory): the GC-only ring at 4 KiB spent most of
     * its time in such faults. A heap that needed a new chunk recently will need these again; the
     * JDK's own allocator (malloc) keeps freed memory too. Once the heap has not grown for
     * {@code holdNanos}, decay goes on as before (jemalloc's decay of dirty pages over 10 s is the
     * same idea).
     *
     * @return bytes released
     */
    long releaseDecayedChunks(final int keep, final long decayNanos, final long holdNanos) {
        final long now = System.nanoTime();
        if (grewWithin(holdNanos) && !failedWithin(holdNanos)) {
            return 0; // (at the budget, memory held back is what the JDK's path may need: no hold then)
        }
        int decayed = 0;
        int empty = 0;
        for (final Chunk c : chunks) {
            if (c.usedPages() == 0) {
                empty++;
                if (now - c.emptySinceNanos >= decayNanos) {
                    decayed++;
                }
            }
        }
        if (empty <= keep || decayed == 0) {
            return 0;
        }
        // keep `keep` empty chunks in all, the fresh ones first: of the decayed, keep what the fresh ones do not cover
        return releaseEmptyChunks(Math.max(0, keep - (empty - decayed)), decayNanos, now);
    }

    /**
     * Returns wholly empty chunks to the JDK, keeping {@code keep} of them.
     *
     * @return bytes released
     */
    long releaseEmptyChunks(final int keep) {
        return releaseEmptyChunks(keep, 0, 0);
    }

    /** Releases empty chunks beyond {@code keep}, only those empty since {@code decayNanos} before {@code now} when {@code decayNanos > 0}. */
    private long releaseEmptyChunks(final int keep, final long decayNanos, final long now) {
        growLock.lock();
        try {
            long released = 0;
            int empty = 0;
            Chunk[] current = chunks;
            final java.util.List<Chunk> sealed = new java.util.ArrayList<>();
            for (final Chunk c : current) {
                if (c.usedPages() == 0 && (decayNanos == 0 || now - c.emptySinceNanos >= decayNanos) && ++empty > keep
                    && seal(c)) {
                    sealed.add(c);
                }
            }
            if (sealed.isEmpty()) {
                return 0;
            }
            try {
                map.removeAll(sealed); // one copy of the map for them all
            } catch (final RuntimeException | Error e) {
                for (final Chunk c : sealed) {
                    c.unseal(); // kept and usable, as if never chosen
                }
                throw e;
            }
            for (final Chunk c : sealed) {
                final Chunk[] next = new Chunk[current.length - 1];
                int i = 0;
                for (final Chunk o : current) {
                    if (o != c) {
                        next[i++] = o;
                    }
                }
                current = next;
                chunks = next;
                c.release();
                released += c.reservedBytes;
                chunksReleased++;
                lastReleaseNanos = System.nanoTime();
                if (Events.recorder()) {
                    final Events.ChunkRelease e = new Events.ChunkRelease();
                    e.bytes = c.reservedBytes;
                    e.chunks = current.length;
                    e.commit();
                }
            }
            return released;
        } finally {
            growLock.unlock();
        }
    }

    /** Takes every page of an empty chunk so no racing {@link #tryNewSlab} can use it; false if one did. */
    private static boolean seal(final Chunk c) {
        return c.seal();
    }

    /** @return bytes of chunk memory held, including alignment pads. */
    long reservedBytes() {
        long sum = 0;
        for (final Chunk c : chunks) {
            sum += c.reservedBytes;
        }
        return sum;
    }

    int chunkCount() {
        return chunks.length;
    }

    long chunksAllocated() {
        return chunksAllocated;
    }

    long chunksReleased() {
        return chunksReleased;
    }
}
