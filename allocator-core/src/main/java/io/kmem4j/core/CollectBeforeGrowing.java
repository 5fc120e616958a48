package io.kmem4j.core;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Collects before growing: a thread about to add a chunk, when kmem4j's reserved memory would pass a
 * mark, first asks for the collection ({@code System.gc()}) that the JDK's {@code java.nio.Bits}
 * runs only at {@code -XX:MaxDirectMemorySize}, so that buffers the program dropped to GC come back
 * before new memory is touched. Neither the JDK nor kmem4j otherwise learns of a dropped buffer
 * before the Java heap happens to collect, which for a program with a small heap and large buffers
 * may be hundreds of megabytes later: the JDK's default limit is the maximum heap size.
 *
 * <p>The mark follows the live set as a garbage collector's heap target does (Go's pacer with
 * {@code GOGC=100}: the next collection when the heap has doubled what survived the last, with a
 * floor): after each such collection it is twice the bytes of kmem4j's buffers still in use, and at
 * least {@link SlabAllocatorConfig#collectAboveBytes()}. A program whose buffers are live pays one
 * collection per doubling of its reserve; one that drops them keeps its reserve near the floor.
 *
 * <pre>
 *   no collection when (each test cheap, in this order)
 *     collectAboveBytes is 0, or the reserve with one more chunk stays within the mark
 *     less than 50 times the last such collection's pause has passed since it (at most 2 % of the
 *       time goes to these pauses; the cleaners they find would have run anyway, later)
 *     the caller is the JDK's GC cleaner thread (it only frees, and would wait for itself)
 *     another thread runs one now: wait for it, then look again (no second collection)
 *     a collection runs now (a thread at the limit): wait for it, then look again
 *     one more chunk does not fit under the limit: the growth fails, and the limit's own reclaiming
 *       (AtTheLimit) collects, once
 *     the last such collection gave back less than a chunk and GC has freed no buffer of this
 *       allocator since: the program drops none, or too few to matter (its buffers are live or
 *       released explicitly); the first time the mark is passed, one collection finds out (on JDK 25
 *       a program with the default heap may run for many seconds before a collection of its own)
 *     the Java heap in use is larger than the bytes of kmem4j's buffers in use: the collection
 *       would mark more than it could give back (a large heap pays a long pause; the JDK's limit
 *       still collects for it)
 *   else
 *     System.gc() (shared with the collections at the limit, ReferenceProcessing), help the JDK run
 *     the cleaners it found until none is pending (at most 20 ms or the pause, if longer), set the
 *     mark, look again
 * </pre>
 *
 * <p>Threads that would grow meanwhile wait for the one collecting (a virtual thread does not: it
 * grows): a wait of about what adding a chunk costs them (a chunk is 1,024 page faults), and what the
 * collection found is theirs too. The 2 % counts the pauses only: the cleaners it found would have
 * run anyway, later, on the JDK's thread. With {@code -XX:+DisableExplicitGC} the request does
 * nothing, as the JDK's does; the one collection that found nothing then stops the next. Without
 * {@code jdk.internal.access} exported to kmem4j (the agent exports it) the frees arrive as the JDK's
 * thread runs the cleaners, after the mark was set: the mark is higher, the collections fewer.
 * Measured on the samples (BENCHMARKS.md, "Collect before growing"; JDK 17 / 25): peak RSS of the
 * echo server's long run 0.51x / 0.23x of the JDK's alone, the pipeline's 0.47x / 0.58x, at 1.09-2.33x
 * the throughput.
 *
 * <p>Threads: any allocating thread that holds no kmem4j lock (where the page heap grows).
 */
final class CollectBeforeGrowing {
    /** At most one pause in this many of the time between them: 2 %. */
    static final long TIME_SHARE = 50;
    /** After a refusal (the heap's size, nothing dropped), the next look comes no sooner (summing the threads' figures is not free). */
    static final long HOLD_NANOS = 10_000_000L;
    /** Helping the cleaners a collection found stops after this long, or after the collection's own pause if that was longer. */
    static final long HELP_NANOS = 20_000_000L;

    private final long floorBytes;
    private final long chunkBytes;
    private final PageHeap pages;
    private final ThreadRegistry registry;
    /** Held by the thread that decides and runs a collection; the others wait for it. */
    private final ReentrantLock collecting = new ReentrantLock();
    /** Reserved bytes that one more chunk may reach without a collection. */
    private volatile long markBytes;
    /** {@link System#nanoTime()} before which no collection runs. */
    private volatile long notBeforeNanos;
    // written under collecting
    private volatile long collections;
    private boolean probed;
    /** Bytes in use the last collection here gave back. */
    private long lastYieldBytes;
    /** {@link ThreadRegistry.Totals#gcFrees()} after the last collection here: more since, and GC found dropped buffers meanwhile. */
    private long gcFreesAfterLast;

    /**
     * @param floorBytes the least mark, {@link SlabAllocatorConfig#collectAboveBytes()}; 0: never collect
     * @param chunkBytes bytes one growth adds
     */
    CollectBeforeGrowing(final long floorBytes, final long chunkBytes, final PageHeap pages, final ThreadRegistry registry) {
        this.floorBytes = floorBytes;
        this.chunkBytes = chunkBytes;
        this.pages = pages;
        this.registry = registry;
        this.markBytes = floorBytes;
        this.notBeforeNanos = System.nanoTime();
    }

    /**
     * Called where the page heap is about to grow, with no kmem4j lock held.
     *
     * @param tc the calling thread's cache, or {@code null} (the shared tier: a virtual thread, which never
     *           waits here for another thread's collection); the cleaners it runs helping the JDK count as GC
     *           frees ({@link ReferenceProcessing#help(ThreadCache)})
     * @return true when a collection ran, or another thread's ended, just now: look for memory again
     *         before growing; false: grow
     */
    boolean collect(final ThreadCache tc) {
        if (floorBytes == 0 || pages.reservedBytes() + chunkBytes <= markBytes || System.nanoTime() - notBeforeNanos < 0
            || JdkInternals.isGcCleanerThread(Thread.currentThread())) {
            return false;
        }
        if (!collecting.tryLock()) {
            if (tc == null) {
                return false;
            }
            collecting.lock(); // another thread decides or collects: its outcome is ours
            collecting.unlock();
            return true;
        }
        try {
            final long start = System.nanoTime();
            if (start - notBeforeNanos < 0 || pages.reservedBytes() + chunkBytes <= markBytes) {
                return true; // a collection ended while this thread queued
            }
            if (ReferenceProcessing.awaitRunningCollection(tc)) {
                return true; // one runs now (a thread at the limit): take what it gives back first
            }
            if (!JdkInternals.fitsUnderTheLimit(chunkBytes)) {
                return false; // growing fails: what happens at the limit (AtTheLimit) collects, once
            }
            final ThreadRegistry.Totals before = registry.totals();
            final long inUse = before.bytesInUse();
            final Runtime rt = Runtime.getRuntime();
            final long heapInUse = rt.totalMemory() - rt.freeMemory();
            if (heapInUse > inUse || probed && lastYieldBytes < chunkBytes && before.gcFrees() == gcFreesAfterLast) {
                notBeforeNanos = start + HOLD_NANOS;
                return false;
            }
            final Events.CollectBeforeGrowing event = Events.recorder() ? new Events.CollectBeforeGrowing() : null;
            if (event != null) {
                event.begin();
            }
            final long gcNanos = ReferenceProcessing.collectUnlessOneStartedSince(ReferenceProcessing.collectionsStarted(), tc);
            if (gcNanos == 0) {
                return true; // another thread's started meanwhile (at the limit): it was this request's too
            }
            final long helpUntil = System.nanoTime() + Math.max(HELP_NANOS, gcNanos);
            while (ReferenceProcessing.help(tc) && System.nanoTime() - helpUntil < 0) {
                // the JDK's Reference Handler wakes a helper after each cleaner: wait for the ones it found
            }
            final ThreadRegistry.Totals after = registry.totals();
            final long afterBytes = after.bytesInUse();
            markBytes = Math.max(floorBytes, 2 * afterBytes);
            notBeforeNanos = System.nanoTime() + gcNanos * TIME_SHARE;
            lastYieldBytes = inUse - afterBytes;
            gcFreesAfterLast = after.gcFrees();
            probed = true;
            collections++;
            if (event != null) {
                event.reservedBytes = pages.reservedBytes();
                event.bytesInUseBefore = inUse;
                event.bytesInUseAfter = afterBytes;
                event.heapInUse = heapInUse;
                event.commit();
            }
            return true;
        } finally {
            collecting.unlock();
        }
    }

    /** @return reserved bytes that one more chunk may reach without a collection now */
    long markBytes() {
        return markBytes;
    }

    /** @return collections this allocator asked for before growing, since it was built */
    long collections() {
        return collections;
    }
}
