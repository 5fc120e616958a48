package io.kmem4j.core;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

/**
 * The cache-id slab allocator: direct {@link ByteBuffer}s carved from off-heap chunks, served
 * through per-thread magazines, released by the JDK's own cleaner or explicitly.
 *
 * <h2>Buffers it returns</h2>
 * A root {@code java.nio.DirectByteBuffer} (never a slice of a slab) built with the JDK's
 * mapped-buffer constructor: {@code capacity()} exactly the request, position 0, limit = capacity,
 * {@code BIG_ENDIAN}, writable, all bytes zero (unless the configuration turns zeroing off,
 * {@link SlabAllocatorConfig#zeroing()}: then what this allocator's last user of the block left), memory
 * starting on a 64-byte cache line. A
 * <em>tracked</em> buffer ({@link #allocate}) has a real JDK cleaner whose thunk returns the block to
 * the allocator exactly once, when the buffer and every view of it are unreachable, or at once on
 * {@code Unsafe.invokeCleaner(buffer)}, {@code ((DirectBuffer) buffer).cleaner().clean()} or
 * {@link #free(ByteBuffer)}. An <em>explicit</em> buffer ({@link #allocateExplicit}) has no cleaner
 * and must be freed. A view passed to {@code invokeCleaner} is refused by the JDK ("duplicate or
 * slice") as for its own buffers.
 *
 * <h2>Where each idea lives</h2>
 * This class is the facade: the public API, the allocate hit ({@link #serve}) and the free hit
 * ({@link #release}). The package documentation maps every other idea to its class, names the public
 * origin of each, and states the lock order and every race.
 *
 * <h2>Threads</h2>
 * Every public method may be called from any thread. Platform threads get a private cache on first
 * use; virtual threads share one tier (allocation under the cache lock); the JDK's GC cleaner thread
 * never blocks. A reaper daemon thread ({@code kmem4j-reaper}) adopts the caches of threads that
 * have ended.
 *
 * <h2>Memory</h2>
 * Chunks are counted against {@code -XX:MaxDirectMemorySize} by the JDK's own accounting ({@code java.nio.Bits}):
 * the JDK's {@code direct} BufferPool MXBean shows every chunk, not the slab buffers a second time.
 */
public final class SlabAllocator implements AutoCloseable {
    final SlabAllocatorConfig config;
    final SizeClasses classes;
    final PageHeap pages;
    private final SlabCache[] caches;
    private final int minCapacity;
    private final int maxCapacity;
    /** Zero on release (objects wait all-zero) instead of on allocation; never in debug mode. */
    private final boolean zeroOnFree;
    /** Non-null when explicit buffers are watched for leaks. */
    final LeakDetector leakDetector;
    /** Non-null when allocation sites are sampled. */
    final SiteSampler sampler;
    final ThreadRegistry registry;
    final RemoteFrees remote;
    final Accounting accounting;
    final Reaper reaper;
    private final Refill refill;
    final CollectBeforeGrowing collector;
    final SharedTier sharedTier;
    private final BufferFactory buffers;
    private final ExplicitBuffers explicit;
    private volatile boolean closed;

    /**
     * Creates an allocator and starts its reaper thread.
     *
     * @param config the configuration
     * @throws UnsupportedJdkException when this JDK's {@code java.nio} internals are unusable (the message
     *         names the JDK and what did not match)
     */
    public SlabAllocator(final SlabAllocatorConfig config) {
        this(config, new JdkConstructor());
    }

    /** {@link JdkInternals#newDirectBuffer}, as a named class (no lambda spun at start-up). */
    private static final class JdkConstructor implements BufferConstructor {
        @Override
        public ByteBuffer newBuffer(final int capacity, final long address, final Runnable hook) {
            return JdkInternals.newDirectBuffer(capacity, address, hook);
        }
    }

    /** With the buffer constructor given (tests make it fail to check failure atomicity). */
    SlabAllocator(final SlabAllocatorConfig config, final BufferConstructor constructor) {
        Objects.requireNonNull(constructor, "constructor");
        checkJdk();
        final String noHandles = JdkInternals.handlesFailure();
        if (noHandles != null) {
            throw new UnsupportedJdkException(noHandles);
        }
        this.config = Objects.requireNonNull(config, "config");
        this.classes = new SizeClasses(config.maxSizeClassBytes());
        this.zeroOnFree = config.zeroing() && config.zeroOnFree() && !Debug.ON;
        this.pages = new PageHeap(config.chunkSizeBytes(), config.retainedEmptyChunks());
        this.caches = new SlabCache[classes.count()];
        for (int c = 0; c < caches.length; c++) {
            // without zeroing, an object's first hand-out is still zeroed (once per object and chunk): a new
            // chunk is malloc'ed memory, which may hold what other native code left there
            caches[c] = new SlabCache(c, classes.size(c), config, pages, zeroOnFree || !config.zeroing());
        }
        this.minCapacity = config.minCapacityBytes();
        this.maxCapacity = classes.largest();
        this.sampler = config.siteSampleRate() > 0
            ? new SiteSampler(config.siteSampleRate(), config.siteFramesToSkip()) : null;
        this.leakDetector = config.explicitLeakDetection() ? new LeakDetector(this, sampler) : null;
        this.remote = new RemoteFrees(pages, zeroOnFree);
        this.registry = new ThreadRegistry(caches, remote);
        this.collector = new CollectBeforeGrowing(config.collectAboveBytes(), config.chunkSizeBytes(), pages, registry);
        this.accounting = new Accounting(caches, pages, registry, remote, leakDetector, collector);
        this.reaper = new Reaper(config, caches, pages, registry, remote, accounting);
        this.refill = new Refill(caches, pages, remote, reaper, accounting, collector);
        // without zeroing no object waits all-zero (zeroOnFree false) and allocation does not zero either
        this.buffers = new BufferFactory(this, pages, zeroOnFree || !config.zeroing(), constructor, leakDetector, sampler);
        this.sharedTier = new SharedTier(caches, classes, pages, remote, registry, reaper, buffers, accounting, collector,
            zeroOnFree);
        this.explicit = new ExplicitBuffers(this, pages, classes, leakDetector, sampler, accounting);
        reaper.start();
    }

    /**
     * Probes this JDK's internals the allocator needs (the direct buffer's constructor, its cleaner,
     * {@code java.nio.Bits}), as the constructor does first, without building anything: the agent
     * calls it at start-up and builds the allocator at the first direct allocation.
     *
     * @throws UnsupportedJdkException naming the JDK and what did not match, when an allocator cannot
     *         work here
     */
    public static void checkJdk() {
        final String failure = JdkInternals.failure();
        if (failure != null) {
            throw new UnsupportedJdkException(failure);
        }
    }

    /**
     * @param config a configuration
     * @return the largest capacity an allocator with it serves from slabs, bytes (its largest size class)
     */
    public static int maxCapacity(final SlabAllocatorConfig config) {
        return new SizeClasses(config.maxSizeClassBytes()).largest();
    }

    /** @return the configuration this allocator was built with. */
    public SlabAllocatorConfig config() {
        return config;
    }

    /** @return the largest capacity served from slabs, bytes (the largest size class). */
    public int maxCapacity() {
        return maxCapacity;
    }

    /**
     * @return the JVM's direct-memory limit ({@code -XX:MaxDirectMemorySize}, or the heap's maximum by
     *         default), bytes, as {@code java.nio.Bits} counts against it; -1 when it cannot be read
     */
    public static long directMemoryLimit() {
        return DirectMemoryLimit.bytes();
    }

    /** @return how many size classes this allocator has. */
    public int sizeClassCount() {
        return classes.count();
    }

    /**
     * @param capacity bytes, {@code 0 <= capacity <= maxCapacity()}
     * @return the index of the size class serving {@code capacity} ({@code 0 .. sizeClassCount() - 1})
     */
    public int sizeClassIndex(final int capacity) {
        return classes.indexOf(capacity);
    }

    /**
     * @param index a size class index ({@code 0 .. sizeClassCount() - 1})
     * @return the object size of that class, bytes (the capacity of the block behind every buffer it serves)
     */
    public int sizeClassBytes(final int index) {
        return classes.size(index);
    }

    /**
     * Runs {@code task} at the start of each reaper pass: every {@code reapIntervalMillis} on the reaper
     * thread, and on the caller of {@link #trim()}, {@link #close()} or of an allocation that relieves
     * the direct-memory budget. For a layer above this allocator that keeps blocks per thread and must
     * give back those of ended threads, which that same pass then reaps. Runs may overlap: a task must
     * be safe to run on two threads at once. A task that throws is counted in
     * {@link AllocatorStats#hookFailures()} and runs again next pass. Threads: any.
     *
     * @param task short, non-blocking; it must not call {@link #trim()}
     * @throws NullPointerException {@code "task"} when {@code task} is null
     */
    public void onReap(final Runnable task) {
        reaper.onReap(task);
    }

    /**
     * As {@link #onReap}, but never inside an allocation: runs at the start of each pass of the reaper
     * thread and of {@link #trim()} and {@link #close()} (on their caller, which may be an application
     * thread; {@code close()} runs two passes), after the {@link #onReap} tasks, and not in the passes an
     * allocation runs to relieve the direct-memory budget. For slow work that must stay off the application's
     * allocation path: a system call, a first lookup of a platform bean (which itself reads files with
     * temporary direct buffers: field trial, one extra fallback counted for such a lookup in the middle
     * of an application's {@code allocateDirect}). Threads: any.
     *
     * @param task safe to run on two threads at once; it must not call {@link #trim()}
     * @throws NullPointerException {@code "task"} when {@code task} is null
     */
    public void onReapOffAllocation(final Runnable task) {
        reaper.onReapOffAllocation(task);
    }

    // ------------------------------------------------------------------------------- allocate

    /**
     * Allocates a tracked buffer of exactly {@code capacity} bytes (shape in the class comment).
     * Requests outside {@code [minCapacityBytes, largest size class]}, re-entrant calls and any
     * failure inside kmem4j fall back to {@code ByteBuffer.allocateDirect} and are counted.
     *
     * @param capacity bytes, {@code >= 0}
     * @return a zero-filled direct buffer
     * @throws IllegalArgumentException when {@code capacity < 0}, as the JDK
     * @throws OutOfMemoryError when the direct-memory budget is exhausted, as the JDK
     */
    public ByteBuffer allocate(final int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity < 0: (" + capacity + " < 0)");
        }
        final ByteBuffer b = tryAllocate(capacity);
        return b != null ? b : ByteBuffer.allocateDirect(capacity);
    }

    /**
     * Allocates a tracked buffer from the slabs, or returns {@code null} when this request should
     * go to the JDK (the agent's entry point). Never throws: failures inside kmem4j are counted as
     * fallbacks. The cost of a magazine hit is stated at {@link #serve}, which is called out of line
     * ({@link OutOfLine}: one indirect call, so that the caller's compiled code does not hold it).
     *
     * @param capacity bytes
     * @return the buffer, or {@code null} (counted in {@link AllocatorStats#fallbacks()})
     */
    public ByteBuffer tryAllocate(final int capacity) {
        return OutOfLine.serve(this, capacity, true);
    }

    /**
     * Allocates an <em>explicit</em> buffer: the same shape as {@link #allocate(int)} but with no
     * cleaner, like Netty's "no cleaner" buffers. GC never frees it: it must be returned with
     * {@link #free(ByteBuffer)}, which costs no JDK cleaner bookkeeping; this is the fast flavour for
     * code that frees explicitly (buffer pools). After {@code free} the buffer's address is cleared,
     * so a second {@code free} is detected and counted, never handed to the pool twice. Requests the
     * slabs do not serve come from {@code ByteBuffer.allocateDirect} (with a cleaner); {@code free}
     * releases those too.
     *
     * @param capacity bytes, {@code >= 0}
     * @return a zero-filled direct buffer
     * @throws IllegalArgumentException when {@code capacity < 0}
     * @throws OutOfMemoryError when the direct-memory budget is exhausted, as the JDK
     */
    public ByteBuffer allocateExplicit(final int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity < 0: (" + capacity + " < 0)");
        }
        final ByteBuffer b = tryAllocateExplicit(capacity);
        return b != null ? b : ByteBuffer.allocateDirect(capacity);
    }

    /**
     * Allocates an <em>explicit</em> buffer (see {@link #allocateExplicit(int)}) from the slabs, or
     * returns {@code null} when the slabs do not serve this request (outside
     * {@code [minCapacityBytes, largest size class]}, budget exhausted, closed, re-entrant call, any
     * failure inside kmem4j; counted in {@link AllocatorStats#fallbacks()}). The agent's entry point
     * for buffer pools: on {@code null} the pool's own allocation runs, so the pool's own release
     * code only ever sees its own memory or a buffer for which {@link #owns(ByteBuffer)} is true.
     * Never throws.
     *
     * @param capacity bytes
     * @return a zero-filled explicit buffer, or {@code null}
     */
    public ByteBuffer tryAllocateExplicit(final int capacity) {
        return serve(capacity, false);
    }

    /**
     * The allocate hit path of both flavours; {@code null} means "let the JDK allocate". A hit costs:
     * one {@code ThreadLocal} lookup, one volatile load ({@code closed}), two range compares, the kind
     * and re-entrancy tests, one byte-array load (size class), a magazine pop (no lock, no atomic),
     * four plain statistics stores, zeroing when frees do not zero, and the objects built: the
     * {@code DirectByteBuffer}; a tracked one adds a JDK cleaner: with the owned lifecycle kept in its
     * slab's slot (two plain stores) with the slot's {@link SlotRelease} (made once per slot) as thunk,
     * else a {@link Release} hook and registration in the JDK's list under the JDK's global cleaner lock. Hits are not counted: they are allocations minus misses.
     */
    ByteBuffer serve(final int capacity, final boolean tracked) {
        if (capacity < minCapacity || capacity > maxCapacity || closed) {
            return outsideServedRange(capacity);
        }
        final ThreadCache tc = registry.current();
        if (tc.kind != ThreadCache.CACHING || tc.busy || tc.revoked()) {
            return offTheHitPath(tc, capacity, tracked);
        }
        return serveFrom(tc, capacity, tracked);
    }

    /** {@link #serve} from the magazines of {@code tc}, which the caller may use (its own, or borrowed). */
    private ByteBuffer serveFrom(final ThreadCache tc, final int capacity, final boolean tracked) {
        final int cls = classes.indexOf(capacity);
        final Magazine m = tc.loaded[cls];
        final boolean miss = m.isEmpty();
        final long address = miss ? OutOfLine.refill(refill, tc, cls) : m.pop();
        if (address == 0) {
            return accounting.fallback(capacity, "budget exhausted or failure");
        }
        final ByteBuffer b = buffers.build(tc, cls, address, capacity, tracked);
        if (b == null) {
            return accounting.failed(capacity);
        }
        tc.countAllocation(cls, address, capacity, miss);
        return b;
    }

    /**
     * A re-entrant call (the JDK's path), a shared kind's (the shared tier), a carrier of virtual
     * threads running its own code (its magazines borrowed, see {@link ThreadCache#CARRIER}), or a
     * cache the reaper revoked (take it back).
     */
    private ByteBuffer offTheHitPath(final ThreadCache tc, final int capacity, final boolean tracked) {
        if (tc.busy) {
            return accounting.fallback(capacity, "re-entrant call");
        }
        if (tc.kind != ThreadCache.CACHING) {
            return sharedTier.allocate(tc, capacity, tracked);
        }
        if (tc.isCarrier()) {
            if (!tc.borrow()) {
                return sharedTier.allocate(registry.shared, capacity, tracked); // a virtual thread that moved has them
            }
            try {
                return serveFrom(tc, capacity, tracked);
            } finally {
                tc.endBorrow();
            }
        }
        tc.resume(); // the reaper emptied this idle thread's cache: take it back, empty
        return serve(capacity, tracked);
    }

    /** A request the slabs do not serve; one above the largest class may first need room under the budget. */
    private ByteBuffer outsideServedRange(final int capacity) {
        if (!closed && capacity > maxCapacity) {
            reaper.relieveBudgetFor(capacity);
        }
        return accounting.fallback(capacity, closed ? "closed" : "size outside the served range");
    }

    /**
     * Allocation sites holding the most sampled live bytes ({@code siteSampleRate} on).
     *
     * @param top how many sites, at most
     * @return the sites, largest sampled live bytes first; empty when sampling is off
     */
    public List<SiteStats> outstandingBySite(final int top) {
        return sampler == null ? List.of() : sampler.outstanding(top);
    }

    // ------------------------------------------------------------------------------- free

    /**
     * Releases a buffer at once.
     * <ul>
     *   <li>A tracked buffer ({@link #allocate(int)}) or any JDK root direct buffer: its JDK cleaner
     *       runs, exactly as {@code Unsafe.invokeCleaner(buffer)} would; a second release is a no-op.</li>
     *   <li>An explicit buffer ({@link #allocateExplicit(int)}): its block returns to the allocator and
     *       the buffer's address is cleared with one CAS, so a second or racing release is detected,
     *       counted in {@link AllocatorStats#doubleFrees()} and ignored.</li>
     * </ul>
     * Threads: any. A view must not be used after its root was freed (as with the JDK).
     *
     * <p>A root buffer with no cleaner that this allocator did not hand out (as JNI
     * {@code NewDirectByteBuffer} or {@code MemorySegment.asByteBuffer()} make) is refused when its
     * memory is not ours, or does not start an object of its capacity's size class, or covers an object
     * that is free in its slab. Such a buffer laid exactly over a buffer handed out (same address, a
     * capacity of the same class) cannot be told from it: pass {@code free} only the buffers
     * {@link #allocateExplicit(int)} returned.
     *
     * @param buffer a root direct buffer
     * @throws IllegalArgumentException {@code "duplicate or slice"} for a view, as the JDK;
     *         {@code "not a direct buffer: ..."} for a heap buffer; {@code "not a buffer of this
     *         allocator: ..."} for a foreign buffer that has no cleaner (nothing is changed)
     */
    public void free(final ByteBuffer buffer) {
        explicit.freeOnce(buffer);
    }

    /**
     * {@link #free(ByteBuffer)}, telling the caller whether this call was the release: a buffer
     * pool's code that must run once per buffer (a byte counter) runs only on {@code true}.
     * Threads: any; of two racing releases of one explicit buffer exactly one gets {@code true}.
     *
     * @param buffer a root direct buffer
     * @return {@code false} when the explicit buffer was already released (counted in
     *         {@link AllocatorStats#doubleFrees()}, nothing changed); {@code true} otherwise (its
     *         block went back, or the buffer's JDK cleaner was invoked, which runs at most once)
     * @throws IllegalArgumentException as {@link #free(ByteBuffer)}
     */
    public boolean freeOnce(final ByteBuffer buffer) {
        return explicit.freeOnce(buffer);
    }

    /**
     * Releases {@code buffer} when it is an explicit root buffer of this allocator, with one lookup of
     * its chunk (a release hook that sees this allocator's blocks and foreign buffers alike, such as
     * Netty's {@code freeDirect}). Threads: any.
     *
     * @param buffer any buffer, or {@code null}
     * @return true when it was an explicit root of this allocator: its block went back now, or a
     *         racing release took it first (counted in {@link AllocatorStats#doubleFrees()}); false for
     *         anything else (a foreign, heap or tracked buffer, a view, {@code null}, an explicit buffer
     *         already released), which is left unchanged
     * @throws IllegalArgumentException {@code "not a buffer of this allocator: ..."} for a root whose
     *         memory lies in this allocator's chunks but is no block it handed out (nothing is changed)
     */
    public boolean freeIfExplicit(final ByteBuffer buffer) {
        return explicit.freeIfExplicit(buffer);
    }

    /**
     * Takes an explicit buffer's block away from the buffer for a while, without releasing it: the
     * buffer's address is cleared (with one CAS, as {@link #free(ByteBuffer)} clears it), so code that
     * must not see kmem4j's memory (a pool's {@code Unsafe.reallocateMemory}) sees address 0, while
     * the block stays taken and its contents stay intact. Exactly one of {@link #reattach} (then
     * {@link #free(ByteBuffer)}, or keep using the buffer) must follow. A {@link #free} while detached
     * is counted as a double free and changes nothing. Threads: any.
     *
     * @param buffer an explicit root buffer of this allocator ({@link #isExplicit(ByteBuffer)})
     * @return the block's address (for {@link #reattach}), or 0 when the address was already cleared
     *         (released, or detached by a racing caller); nothing changed then
     * @throws IllegalArgumentException {@code "not an explicit buffer of this allocator: ..."}
     */
    public long detach(final ByteBuffer buffer) {
        return explicit.detach(buffer);
    }

    /**
     * Gives a buffer detached by {@link #detach(ByteBuffer)} its block back: the buffer
     * is valid again, with the contents it had. Threads: any.
     *
     * @param buffer the buffer passed to {@code detach}
     * @param address what {@code detach} returned for it ({@code != 0})
     * @throws IllegalStateException {@code "not detached: ..."} when the buffer's address is not 0
     *         (nothing changed)
     */
    public void reattach(final ByteBuffer buffer, final long address) {
        explicit.reattach(buffer, address);
    }

    /**
     * @param buffer any buffer
     * @return true when {@code buffer} is a root buffer whose memory this allocator handed out
     *         (views and foreign buffers: false). The test reads only this allocator's tables.
     */
    public boolean owns(final ByteBuffer buffer) {
        return explicit.owns(buffer);
    }

    /**
     * @param buffer any buffer
     * @return true when {@link #owns(ByteBuffer)} and the buffer is of the explicit flavour (no
     *         cleaner: {@link #free(ByteBuffer)} clears its address)
     */
    public boolean isExplicit(final ByteBuffer buffer) {
        return explicit.isExplicit(buffer);
    }

    /**
     * @param buffer any buffer
     * @return true when {@code buffer}'s memory lies in this allocator's chunks: a root buffer it
     *         handed out or any view of one ({@code slice}, {@code duplicate}, ...). Such memory must
     *         never reach {@code Unsafe.freeMemory}. Reads only this allocator's tables.
     */
    public boolean ownsMemoryOf(final ByteBuffer buffer) {
        return explicit.ownsMemoryOf(buffer);
    }

    /**
     * The free hit path, for every release of a slab block ({@code known}: the chunk holding
     * {@code address}, when the caller found it). Any thread: the slab's owner is read with acquire
     * semantics; a free on a foreign thread goes to the owner ({@link ThreadCache#freeRemote}), a
     * virtual thread's to its carrier's magazines. A hit costs: one {@code ThreadLocal} lookup, the
     * chunk lookup when not known (a volatile load, a hash probe), two plain loads (head page, counters
     * word) and one of the cache table, one acquire load (owner), one volatile load (the cache's
     * revocation word), two plain statistics stores, zeroing when frees zero, a magazine push; no lock, no atomic, no allocation. Before it, a tracked
     * buffer's cleaner ran: with the owned lifecycle, one CAS of its slab slot ({@link SlotRelease}); else the
     * JDK's cleaner, which takes the JDK's global cleaner lock to unlink itself. Those hooks call this out of
     * line ({@link OutOfLine}), the explicit flavour's free directly.
     */
    void release(final long address, final int capacity, final Chunk known) {
        try {
            final ThreadCache tc = registry.current();
            final Chunk c = known != null ? known : pages.map.find(address);
            final int head = c.head[c.pageOf(address)];
            // unlocked reads (package documentation, "Locks and races"): the cache id never changes
            // while the slab exists, and the slab cannot be freed while this object is handed out
            final int cls = CacheTable.get(Counters.cacheId(c.counters[head])).classIndex;
            final int owner = c.ownerAcquire(head);
            if (Debug.ON && Debug.refuses(tc, cls, address, capacity)) {
                accounting.doubleFrees.increment();
                return;
            }
            if (tc.kind == ThreadCache.CACHING && !tc.busy && tc.revoked()) {
                if (tc.isCarrier()) {
                    releaseAsCarrier(tc, cls, address, capacity, owner);
                    return;
                }
                tc.resume(); // the reaper emptied this idle thread's cache: take it back, empty
            }
            if (tc.kind != ThreadCache.CACHING || tc.busy) {
                if (tc == registry.virtual && sharedTier.freeVirtual(cls, address, capacity, owner)) {
                    return; // kept in the carrier's magazines
                }
                OutOfLine.defer(this, tc, cls, address, capacity, owner); // GC cleaner, virtual thread, or inside a slow path
                return;
            }
            releaseTo(tc, cls, address, capacity, owner);
        } catch (final Throwable t) {
            try {
                hookFailed();
            } catch (final Throwable ignored) {
                // counting may fail too (heap exhausted, stack overflow): never throw from a cleaner
            }
        }
    }

    /**
     * Counts a release that failed: the block stays taken. May throw (the heap exhausted, the stack
     * overflowed): callers inside a cleaner, where a throw would exit the JVM, guard the call.
     */
    void hookFailed() {
        accounting.hookFailures.increment();
    }

    /** A free on a carrier of virtual threads running its own code: to its magazines, borrowed ({@link ThreadCache#CARRIER}). */
    private void releaseAsCarrier(final ThreadCache tc, final int cls, final long address, final int capacity, final int owner) {
        if (!tc.borrow()) {
            OutOfLine.defer(this, registry.shared, cls, address, capacity, owner); // a virtual thread that moved has them
            return;
        }
        try {
            releaseTo(tc, cls, address, capacity, owner);
        } finally {
            tc.endBorrow();
        }
    }

    /**
     * A free that does not touch magazines: to the slab's owner's inbox, or to the orphans. Called
     * through {@link OutOfLine#defer} only: on the GC cleaner's thread it runs for every buffer dropped
     * to GC, and inlined it made up about 0.8 KB of every compilation of the release path.
     */
    void defer(final ThreadCache tc, final int cls, final long address, final int capacity, final int owner) {
        if (tc.runningGcCleaners) { // first: a racy reader then never sees the free without it (an explicit one)
            tc.count(ThreadCache.GC_FREES_HELPED, 1); // (the thread is busy: inside a slow path, its frees come here)
        }
        tc.countFree(cls, capacity);
        if (owner != 0) {
            tc.freeRemote(owner, address);
        } else {
            remote.orphanMt(tc, address);
        }
    }

    /** {@link #release} into the magazines of {@code tc}, which the caller may use (its own, or borrowed). */
    private void releaseTo(final ThreadCache tc, final int cls, final long address, final int capacity, final int owner) {
        tc.countFree(cls, capacity);
        if (owner != 0 && owner != tc.id) {
            OutOfLine.freeRemote(tc, owner, address);
            return;
        }
        if (zeroOnFree) {
            Zeroing.zero(address, capacity); // while hot in this core's cache
        }
        final Magazine m = tc.loaded[cls];
        if (!m.isFull()) {
            m.push(address);
            return;
        }
        OutOfLine.spill(tc, cls, address);
    }

    // ------------------------------------------------------------------------------- trim, stats

    /**
     * Returns memory to the JDK: the caches of ended threads are adopted, orphaned frees go back to
     * their slabs, every depot is flushed, empty slabs are freed and wholly empty chunks are released.
     * Objects held in live threads' magazines and frozen slabs stay (they belong to those threads).
     * Threads: any; serialised with the reaper.
     *
     * @return bytes of chunk memory released
     */
    public long trim() {
        return reaper.trim();
    }

    /** One reaper pass now (tests; the reaper thread runs it every {@code reapIntervalMillis}). */
    void reap() {
        reaper.reap();
    }

    /** @return a snapshot of the statistics, summed over all thread caches. */
    public AllocatorStats stats() {
        return accounting.stats();
    }

    /** Checks the accounting equations (debug mode, tests); see {@link Accounting#checkInvariants()}. */
    void checkInvariants() {
        accounting.checkInvariants();
    }

    /** @return the cache of size class {@code cls}. */
    SlabCache cache(final int cls) {
        return caches[cls];
    }

    /**
     * Stops serving new buffers (later requests fall back to the JDK), stops the reaper (and the
     * batching of GC-driven frees, which it flushes), adopts the caches of ended threads and trims. Caches left with no slab give their cache ids back; buffers
     * already handed out stay valid and are still released normally (their caches keep their ids).
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registry.close();
        reaper.stop();
        reaper.stopGcBatching(); // no reaper passes from now on: GC frees go to their owners one at a time
        reaper.reap();
        reaper.trim();
        for (final SlabCache c : caches) {
            c.retireIfEmpty();
        }
    }
}
