package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;

/**
 * The cache-id slab allocator: direct {@link ByteBuffer}s carved from off-heap chunks, served
 * through per-thread magazines, released by the JDK's own cleaner.
 *
 * <h2>Buffers it returns</h2>
 * A root {@code java.nio.DirectByteBuffer} (never a slice of a slab) built with the JDK's
 * mapped-buffer constructor: {@code capacity()} exactly the request, position 0, limit = capacity,
 * {@code BIG_ENDIAN}, writable, all bytes zero, memory starting on a 64-byte cache line. It has a
 * real JDK cleaner whose thunk returns the block to the allocator exactly once, when the buffer and
 * every view of it are unreachable, or at once on {@code Unsafe.invokeCleaner(buffer)},
 * {@code ((DirectBuffer) buffer).cleaner().clean()} or {@link #free(ByteBuffer)}. A view passed to
 * {@code invokeCleaner} is refused by the JDK ("duplicate or slice") as for its own buffers.
 *
 * <h2>Tiers (fast path first)</h2>
 * <pre>
 *  allocate: loaded magazine ─▶ previous magazine ─▶ remote frees sent to me ─▶ depot (cache lock)
 *            ─▶ my frozen slab's bitmap ─▶ a partial / spare / new slab (cache lock) ─▶ JDK fallback
 *  free:     owner of the object's slab is me or nobody ─▶ loaded magazine ─▶ previous ─▶ depot
 *            owner is another thread ─▶ batch for that owner ─▶ its inbox (one CAS per batch)
 *            GC-driven (Reference Handler) or virtual thread ─▶ owner's inbox or the orphan inbox
 * </pre>
 * Ideas: slab counters word with a 16-bit cache id and one table of caches (seed
 * {@code 000_b1c1d6498cce7e72.txt}); bitmap refills at the lowest addresses (seed
 * {@code 001_f6795392cfb9b5c3.txt}); thread-local magazines exchanged with a per-cache depot, per-cache
 * locks (seed {@code 002_934624e672fe4af6.txt}); deferred cross-thread free (seed
 * {@code 003_5484a2f8906cbf25.txt}).
 *
 * <h2>Invariants</h2>
 * For each cache: {@code objects == inuse + free_in_bitmap} per slab, and the objects counted in use
 * are live buffers, rounds in magazines (thread caches and depot), or frees in remote batches and
 * inboxes. A frozen slab's bitmap is written only by its owner; any other slab's only under its
 * cache's lock. Magazines accept objects of any slab of their class.
 *
 * <h2>Threads</h2>
 * Every public method may be called from any thread. Platform threads get a private cache on first
 * use; virtual threads share one tier (allocation under the cache lock); the "Reference Handler"
 * thread never blocks. A reaper daemon thread ({@code kmem4j-reaper}) adopts the caches of threads
 * that have ended.
 *
 * <h2>Memory</h2>
 * Chunks are counted against {@code -XX:MaxDirectMemorySize} through the JDK's own accounting
 * ({@code java.nio.Bits}), so the JDK's {@code BufferPool} MXBean named {@code direct} shows every
 * chunk; the slab buffers themselves are not counted a second time.
 */
public final class SlabAllocator implements AutoCloseable {
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    /**
     * Debug mode, {@code -Dkmem4j.debug=true}, read once so the JIT folds the checks away when off:
     * freed memory is poisoned with {@link #POISON}, every slab's equation
     * {@code objects == inuse + free_in_bitmap} is checked on the slow paths, and a free of an
     * address already waiting in the freeing thread's magazines is refused and counted.
     */
    static final boolean DEBUG = Boolean.getBoolean("kmem4j.debug");
    static final byte POISON = (byte) 0xDB;
    /** A thread freezes a slab of a class of its own only after this many allocations from it. */
    static final long FREEZE_AFTER_ALLOCATIONS = 256;
    /** Objects a thread new to a class takes per refill from the shared slabs. */
    static final int SHARED_REFILL = 8;

    final SlabAllocatorConfig config;
    final SizeClasses classes;
    final PageHeap pages;
    private final SlabCache[] caches;
    private final int minCapacity;
    private final int maxCapacity;
    /** Zero on release (objects wait all-zero) instead of on allocation; never in debug mode. */
    private final boolean zeroOnFree;
    /** Non-null when explicit buffers are watched for leaks. */
    private final LeakDetector leakDetector;
    /** Non-null when allocation sites are sampled. */
    private final SiteSampler sampler;
    /** Builds the buffer objects: the JDK's constructor (tests pass one that fails). */
    private final BufferConstructor constructor;

    private final ThreadLocal<ThreadCache> local = new ThreadLocal<>();
    private final Map<Thread, ThreadCache> byThread = new ConcurrentHashMap<>();
    private final Object registryLock = new Object();
    private volatile ThreadCache[] byId = new ThreadCache[64];
    private final ArrayList<Integer> freeIds = new ArrayList<>();
    private int nextId = 1;
    private final long[] retired;
    private long threadCachesRetired;
    /** {@link #activity()} at the end of the previous {@link #reap()} (under this allocator's monitor). */
    private long activityAtLastReap = -1;

    private final ThreadCache gcCache;
    private final ThreadCache sharedCache;
    private final ThreadCache reaperCache;
    /** Deferred frees with no live owner; drained by any thread's slow path and by the reaper. */
    final RemoteInbox orphans = new RemoteInbox();

    private static final long ADDRESS_OFFSET = BufferUtil.BYTE_BUFFER_ADDRESS_FIELD_OFFSET;

    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder explicitDoubleFrees = new LongAdder();
    private final LongAdder hookFailures = new LongAdder();
    private final LongAdder allocationFailures = new LongAdder();
    private final LongAdder trims = new LongAdder();
    private final Thread reaper;
    private volatile boolean closed;

    /**
     * Creates an allocator and starts its reaper thread.
     *
     * @param config the configuration
     * @throws UnsupportedJdkException when this JDK's {@code java.nio} internals are unusable (message
     *         names the JDK and what did not match)
     */
    public SlabAllocator(final SlabAllocatorConfig config) {
        this(config, JdkInternals::newDirectBuffer);
    }

    /** With the buffer constructor given (tests make it fail to check failure atomicity). */
    SlabAllocator(final SlabAllocatorConfig config, final BufferConstructor constructor) {
        this.constructor = Objects.requireNonNull(constructor, "constructor");
        final String failure = JdkInternals.failure();
        if (failure != null) {
            throw new UnsupportedJdkException(failure);
        }
        this.config = Objects.requireNonNull(config, "config");
        this.classes = new SizeClasses(config.maxSizeClassBytes());
        this.caches = new SlabCache[classes.count()];
        for (int c = 0; c < caches.length; c++) {
            caches[c] = new SlabCache(this, c, classes.size(c));
        }
        this.zeroOnFree = config.zeroOnFree() && !DEBUG;
        this.leakDetector = config.explicitLeakDetection() ? new LeakDetector(this) : null;
        this.sampler = config.siteSampleRate() > 0 ? new SiteSampler(config.siteSampleRate()) : null;
        this.pages = new PageHeap(config.chunkSizeBytes(), config.retainedEmptyChunks(), zeroOnFree);
        this.minCapacity = config.minCapacityBytes();
        this.maxCapacity = classes.largest();
        this.retired = new long[ThreadCache.SCALARS + classes.count() * ThreadCache.CLASS_STRIDE];
        this.gcCache = register(null, ThreadCache.DEFERRING);
        this.sharedCache = register(null, ThreadCache.SHARED);
        this.reaperCache = register(null, ThreadCache.SHARED); // used by the reaper and trim() callers
        this.reaper = new Thread(this::reapLoop, "kmem4j-reaper");
        reaper.setDaemon(true);
        reaper.start();
    }

    /** @return the configuration this allocator was built with. */
    public SlabAllocatorConfig config() {
        return config;
    }

    /** @return the largest capacity served from slabs, bytes (the largest size class). */
    public int maxCapacity() {
        return maxCapacity;
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
     * fallbacks. Cost on a magazine hit: a thread-local lookup, one array load and store, zeroing,
     * and the JDK's buffer and cleaner construction.
     *
     * @param capacity bytes
     * @return the buffer, or {@code null} (counted in {@link AllocatorStats#fallbacks()})
     */
    public ByteBuffer tryAllocate(final int capacity) {
        return serve(capacity, true);
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
        return serve(capacity, false); // leak detection and site sampling are registered in newBuffer
    }

    /** The allocation path of both flavours; {@code null} means "let the JDK allocate". */
    private ByteBuffer serve(final int capacity, final boolean tracked) {
        if (capacity < minCapacity || capacity > maxCapacity || closed) {
            if (capacity > maxCapacity && !closed) {
                relieveBudgetFor(capacity);
            }
            return fallback(capacity, closed ? "closed" : "size outside the served range");
        }
        final ThreadCache tc = threadCache();
        if (tc.kind != ThreadCache.CACHING || tc.busy) {
            return tc.busy ? fallback(capacity, "re-entrant call") : allocateShared(tc, capacity, tracked);
        }
        final int cls = classes.indexOf(capacity);
        final Magazine m = tc.loaded[cls];
        if (m.count > 0) {
            final long address = m.rounds[--m.count];
            tc.stats[ThreadCache.classBase(cls) + ThreadCache.HITS]++;
            return build(tc, cls, address, capacity, tracked, ThreadCache.HITS);
        }
        final long address = allocateSlow(tc, cls);
        if (address == 0) {
            return fallback(capacity, "budget exhausted or failure");
        }
        return build(tc, cls, address, capacity, tracked, ThreadCache.MISSES);
    }

    private ByteBuffer fallback(final int capacity, final String reason) {
        fallbacks.increment();
        final Events.Fallback e = new Events.Fallback();
        if (e.shouldCommit()) {
            e.capacity = capacity;
            e.reason = reason;
            e.commit();
        }
        return null;
    }

    /** A request that failed after its block was taken (and given back): counted; the JDK serves it. */
    private ByteBuffer failed(final int capacity) {
        allocationFailures.increment();
        return fallback(capacity, "buffer construction failed");
    }

    /**
     * Builds a buffer over a block this thread took from its magazines and counts the allocation.
     * Failure atomic: when building fails (the heap exhausted by the buffer, its cleaner or its leak
     * registration; a throwing constructor handle), the block goes back on top of the loaded magazine,
     * the hit or miss ({@code takenAs}) counted for it is taken back, and the JDK serves the request.
     */
    private ByteBuffer build(final ThreadCache tc, final int cls, final long address, final int capacity,
                             final boolean tracked, final int takenAs) {
        final ByteBuffer b;
        try {
            b = newBuffer(tc, address, capacity, tracked);
        } catch (final Throwable t) {
            putLocal(tc, cls, address); // the loaded magazine has room: the block was just popped from it
            tc.stats[ThreadCache.classBase(cls) + takenAs]--;
            return failed(capacity);
        }
        final long[] st = tc.stats;
        final int base = ThreadCache.classBase(cls);
        st[base + ThreadCache.ALLOCS]++;
        st[ThreadCache.ALLOC_BYTES] += capacity;
        if (address > tc.lastAddress[cls]) {
            st[base + ThreadCache.ASCENDING]++;
        }
        tc.lastAddress[cls] = address;
        return b;
    }

    /**
     * Zeroes the block (unless frees zero), builds the buffer over it (tracked: with its release hook)
     * and registers an explicit one with leak detection and site sampling. When it throws, what it
     * registered is undone: no sampled site counts the buffer, no leak registration remains.
     */
    private ByteBuffer newBuffer(final ThreadCache tc, final long address, final int capacity, final boolean tracked) {
        if (!zeroOnFree) {
            Zeroing.zero(address, capacity);
        }
        if (tracked) {
            final Release hook = hook(tc, address, capacity);
            try {
                return constructor.newBuffer(capacity, address, hook);
            } catch (final Throwable t) {
                hook.cancel();
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

    /** The release hook of a tracked buffer; a sampled one also carries its allocation site. */
    private Release hook(final ThreadCache tc, final long address, final int capacity) {
        if (sampler != null && --tc.sampleCountdown <= 0) {
            tc.sampleCountdown = sampler.rate;
            final SiteSampler.Site site = sampler.record(capacity);
            try {
                return new Release.Sampled(this, address, capacity, site);
            } catch (final Throwable t) {
                site.cancelled(capacity);
                throw t;
            }
        }
        return new Release(this, address, capacity);
    }

    /** Leak detection found an explicit buffer collected without free: give its block back. */
    void releaseLeaked(final long address, final int capacity) {
        if (sampler != null) {
            sampler.releasedExplicit(address, capacity);
        }
        release(address, capacity);
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

    /** Magazine miss: previous, inbox, depot, frozen slab, new slab. Returns 0 when out of memory. */
    private long allocateSlow(final ThreadCache tc, final int cls) {
        tc.stats[ThreadCache.classBase(cls) + ThreadCache.MISSES]++;
        tc.busy = true;
        try {
            tc.flushOutgoing();
            absorbRemoteFrees(tc);
            long a = fromMagazines(tc, cls);
            if (a != 0) {
                return a;
            }
            try {
                return refill(tc, cls, true);
            } catch (final OutOfMemoryError budgetExhausted) {
                // No chunk fits under MaxDirectMemorySize now (growth never waits). Take in deferred
                // frees and give back what the depots hold; try once more, growing again only if that
                // released a chunk. Otherwise the JDK's own path serves the request, reclaiming with
                // GC as it always does.
                absorbRemoteFrees(tc);
                a = fromMagazines(tc, cls);
                if (a != 0) {
                    return a;
                }
                giveBackAll(tc, tc); // this thread's own magazines of every class may pin chunks
                final long releasedBytes = trim();
                final Events.BudgetPressure event = new Events.BudgetPressure();
                event.begin();
                event.cache = caches[cls].name;
                event.releasedBytes = releasedBytes;
                try {
                    a = refill(tc, cls, releasedBytes > 0);
                    event.recovered = true;
                    return a;
                } catch (final OutOfMemoryError | SlabCache.RetiredException stillExhausted) {
                    return 0; // the JDK's own path reserves with GC and back-off and throws its own error
                } finally {
                    event.commit();
                }
            } catch (final SlabCache.RetiredException closedMeanwhile) {
                return 0; // the allocator closed after this call checked: the JDK serves it
            }
        } catch (final Throwable unexpected) {
            if (DEBUG && unexpected instanceof IllegalStateException) {
                throw (IllegalStateException) unexpected; // a broken invariant must surface in debug mode
            }
            allocationFailures.increment(); // e.g. a heap OutOfMemoryError: the JDK serves this one
            return 0;
        } finally {
            tc.busy = false;
        }
    }

    private static long fromMagazines(final ThreadCache tc, final int cls) {
        final Magazine m = tc.loaded[cls];
        if (m.count > 0) {
            return m.rounds[--m.count];
        }
        final Magazine p = tc.previous[cls];
        if (p.count > 0) {
            p.sortForAscendingPops();
            tc.loaded[cls] = p;
            tc.previous[cls] = m;
            return p.rounds[--p.count];
        }
        return 0;
    }

    /**
     * Both magazines are empty: exchange the previous one for a full one from the depot, else fill
     * the loaded one from this thread's frozen slab, freezing a new slab when it is used up. When no
     * page is free the cache lock is released before the page heap grows (growing may run GC).
     *
     * @throws OutOfMemoryError when a new chunk cannot be reserved
     * @throws IllegalStateException when the allocator closed meanwhile
     */
    private long refill(final ThreadCache tc, final int cls, final boolean mayGrow) {
        final SlabCache c = caches[cls];
        final Magazine m = tc.loaded[cls];
        final Slab frozen = tc.current[cls];
        if (frozen != null && frozen.freeObjects() > 0) {
            // my frozen slab: only I take from its bitmap, no lock (seed 001: lowest addresses first)
            frozen.fill(m, m.rounds.length);
            return m.rounds[--m.count];
        }
        for (;;) {
            final Chunk[] seen = pages.snapshot();
            c.lock.lock();
            try {
                final Magazine p = tc.previous[cls];
                final Magazine full = c.takeFullLocked();
                if (full != null) {
                    full.sortForAscendingPops();
                    c.putEmptyLocked(p);
                    tc.previous[cls] = m;
                    tc.loaded[cls] = full;
                    return full.rounds[--full.count];
                }
                Slab s = tc.current[cls];
                if (s == null && tc.stats[ThreadCache.classBase(cls) + ThreadCache.ALLOCS] < FREEZE_AFTER_ALLOCATIONS) {
                    // a thread new to this class shares slabs instead of freezing one of its own
                    if (c.fillSharedLocked(m, SHARED_REFILL) > 0) {
                        return m.rounds[--m.count];
                    }
                }
                if (s == null || s.freeObjects() == 0) {
                    if (s != null) {
                        tc.current[cls] = null;
                        c.unfreezeLocked(s);
                    }
                    s = c.freezeSlabLocked(tc);
                    tc.current[cls] = s;
                }
                if (s != null) {
                    s.fill(m, m.rounds.length);
                    return m.rounds[--m.count];
                }
            } finally {
                c.lock.unlock();
            }
            if (!mayGrow) {
                throw new OutOfMemoryError("kmem4j: no free slab and growing is not allowed now");
            }
            pages.grow(seen);
        }
    }

    /** Allocation for threads without a private cache (virtual threads): one object under the lock. */
    private ByteBuffer allocateShared(final ThreadCache tc, final int capacity, final boolean tracked) {
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
                if (address == 0 && orphans.nonEmpty()) {
                    returnOrphans(); // frees deferred by virtual threads and GC: reuse them before growing
                    continue;
                }
                if (address == 0) {
                    pages.grow(seen); // no lock held: growing may run GC
                }
            }
        } catch (final OutOfMemoryError | SlabCache.RetiredException e) {
            return fallback(capacity, "budget exhausted or closed"); // the JDK's path reserves with GC and back-off
        }
        final ByteBuffer b;
        try {
            b = newBuffer(tc, address, capacity, tracked);
        } catch (final Throwable t) {
            giveBackShared(c, tc, address);
            return failed(capacity);
        }
        final int base = ThreadCache.classBase(cls);
        tc.count(base + ThreadCache.ALLOCS, 1);
        tc.count(base + ThreadCache.MISSES, 1);
        tc.count(ThreadCache.ALLOC_BYTES, capacity);
        return b;
    }

    /** A failed build on the shared tier: the block goes back on top of the cache's shared magazine. */
    private void giveBackShared(final SlabCache c, final ThreadCache tc, final long address) {
        try {
            c.lock.lock();
            try {
                c.untakeOneLocked(address, tc);
            } finally {
                c.lock.unlock();
            }
        } catch (final Throwable heapExhausted) {
            deliverOrphan(tc, address); // allocation-free; counted as a deferred free, never lost
        }
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
        freeOnce(buffer);
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
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)) {
            throw new IllegalArgumentException("not a direct buffer: " + buffer);
        }
        if (JdkInternals.attachment(buffer) != null) {
            throw new IllegalArgumentException("duplicate or slice");
        }
        if (JdkInternals.cleaner(buffer) != null) {
            UnsafeApi.invokeCleaner(buffer);
            return true;
        }
        final long address = UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET);
        if (address == 0) {
            explicitDoubleFrees.increment(); // already freed: its address was cleared
            return false;
        }
        final Chunk c = pages.map.find(address);
        final Slab s = c == null ? null : c.slabs[c.pageOf(address)];
        if (s == null || !s.mayBeHandedOut(address, buffer.capacity(), classes)) {
            if (UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET) == 0) {
                explicitDoubleFrees.increment(); // a racing free won, and its block is back in its slab already
                return false;
            }
            throw new IllegalArgumentException("not a buffer of this allocator: " + buffer);
        }
        if (!UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, address, 0L)) {
            explicitDoubleFrees.increment(); // a racing free won
            return false;
        }
        if (leakDetector != null) {
            leakDetector.untrack(address);
        }
        if (sampler != null) {
            sampler.releasedExplicit(address, buffer.capacity());
        }
        release(address, buffer.capacity(), c);
        return true;
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
        if (!isExplicit(buffer)) {
            throw new IllegalArgumentException("not an explicit buffer of this allocator: " + buffer);
        }
        final long address = UnsafeApi.getLongVolatile(buffer, ADDRESS_OFFSET);
        return address != 0 && UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, address, 0L) ? address : 0L;
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
        if (address == 0 || !UnsafeApi.compareAndSetLong(buffer, ADDRESS_OFFSET, 0L, address)) {
            throw new IllegalStateException("not detached: " + buffer + " (address " + address + ")");
        }
    }

    /**
     * @param buffer any buffer
     * @return true when {@code buffer} is a root buffer whose memory this allocator handed out
     *         (views and foreign buffers: false). The test reads only this allocator's tables.
     */
    public boolean owns(final ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)
            || JdkInternals.attachment(buffer) != null) {
            return false;
        }
        return pages.map.find(BufferUtil.address(buffer)) != null;
    }

    /**
     * @param buffer any buffer
     * @return true when {@link #owns(ByteBuffer)} and the buffer is of the explicit flavour (no
     *         cleaner: {@link #free(ByteBuffer)} clears its address)
     */
    public boolean isExplicit(final ByteBuffer buffer) {
        return owns(buffer) && JdkInternals.cleaner(buffer) == null;
    }

    /**
     * @param buffer any buffer
     * @return true when {@code buffer}'s memory lies in this allocator's chunks: a root buffer it
     *         handed out or any view of one ({@code slice}, {@code duplicate}, ...). Such memory must
     *         never reach {@code Unsafe.freeMemory}. Reads only this allocator's tables.
     */
    public boolean ownsMemoryOf(final ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || !JdkInternals.isDirectByteBuffer(buffer)) {
            return false;
        }
        final long address = BufferUtil.address(buffer);
        return address != 0 && pages.map.find(address) != null;
    }

    /**
     * The release hook (see {@link Release}); runs on the thread that cleans the buffer, or on the
     * "Reference Handler" thread for GC. Never throws and never blocks on the GC path.
     */
    void release(final long address, final int capacity) {
        release(address, capacity, null);
    }

    /** {@link #release(long, int)}; {@code known} is the chunk holding {@code address} when the caller found it. */
    private void release(final long address, final int capacity, final Chunk known) {
        try {
            final ThreadCache tc = threadCache();
            tc.count(ThreadCache.FREE_BYTES, capacity);
            tc.count(tc == gcCache ? ThreadCache.GC_FREES : ThreadCache.EXPLICIT_FREES, 1);
            final Chunk c = known != null ? known : pages.map.find(address);
            final int head = c.head[c.pageOf(address)];
            final int cls = CacheTable.get(Counters.cacheId(c.counters[head])).classIndex;
            tc.count(ThreadCache.classBase(cls) + ThreadCache.FREES, 1);
            final int owner = c.ownerAcquire(head);
            if (DEBUG) {
                if (tc.kind == ThreadCache.CACHING && inMagazines(tc, cls, address)) {
                    explicitDoubleFrees.increment();
                    return;
                }
                UnsafeApi.setMemory(address, capacity, POISON);
            }
            if (tc.kind != ThreadCache.CACHING || tc.busy) {
                if (owner != 0) {
                    tc.sendRemote(owner, address);
                } else {
                    deliverOrphan(tc, address);
                }
                return;
            }
            if (owner == 0 || owner == tc.id) {
                if (zeroOnFree) {
                    Zeroing.zero(address, capacity); // while hot in this core's cache
                }
                final Magazine m = tc.loaded[cls];
                if (m.count < m.rounds.length) {
                    m.rounds[m.count++] = address;
                    return;
                }
                freeSlow(tc, cls, address);
            } else {
                tc.sendRemote(owner, address);
            }
        } catch (final Throwable t) {
            try {
                hookFailures.increment(); // the block stays taken; a throwing cleaner would exit the JVM
            } catch (final Throwable ignored) {
                // even counting may fail when the heap is exhausted: never throw from a cleaner
            }
        }
    }

    private static boolean inMagazines(final ThreadCache tc, final int cls, final long address) {
        for (final Magazine m : new Magazine[] {tc.loaded[cls], tc.previous[cls]}) {
            for (int i = 0; i < m.count; i++) {
                if (m.rounds[i] == address) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Local free when the loaded magazine is full: swap with previous or exchange with the depot. */
    private void freeSlow(final ThreadCache tc, final int cls, final long address) {
        final boolean wasBusy = tc.busy;
        tc.busy = true;
        try {
            final Magazine m = tc.loaded[cls];
            final Magazine p = tc.previous[cls];
            if (p.count == 0) {
                tc.loaded[cls] = p;
                tc.previous[cls] = m;
                p.rounds[p.count++] = address;
                return;
            }
            final SlabCache c = caches[cls];
            Magazine e;
            c.lock.lock();
            try {
                // take the empty magazine first: if that fails (heap exhausted) nothing has changed
                e = c.fullMagazinesLocked() < config.depotMagazines() ? c.takeEmptyLocked() : null;
                if (e != null && c.putFullLocked(p)) {
                    // p now belongs to the depot
                } else {
                    if (e != null) {
                        c.putEmptyLocked(e);
                    }
                    c.flushLocked(p, tc);
                    e = p;
                }
            } finally {
                c.lock.unlock();
            }
            tc.previous[cls] = m;
            tc.loaded[cls] = e;
            e.rounds[e.count++] = address;
        } finally {
            tc.busy = wasBusy;
        }
    }

    /** Puts an object this thread holds back into its magazines (no statistics). */
    private void putLocal(final ThreadCache tc, final int cls, final long address) {
        final Magazine m = tc.loaded[cls];
        if (m.count < m.rounds.length) {
            m.rounds[m.count++] = address;
        } else {
            freeSlow(tc, cls, address);
        }
    }

    /** Takes in the frees other threads sent to {@code tc}, and orphaned ones. */
    private void absorbRemoteFrees(final ThreadCache tc) {
        if (tc.inbox.nonEmpty()) {
            absorb(tc, tc.inbox.takeAll());
        }
        if (orphans.nonEmpty()) {
            absorb(tc, orphans.takeAll());
        }
    }

    private void absorb(final ThreadCache tc, final long chain) {
        long n = 0;
        long a = chain;
        try {
            while (a != 0) {
                final Chunk c = pages.map.find(a);
                final int cls = CacheTable.get(Counters.cacheId(c.counters[c.head[c.pageOf(a)]])).classIndex;
                final long next = RemoteInbox.next(a);
                putLocal(tc, cls, a);
                clearDeferred(a, classes.size(cls)); // (putLocal never touches the object's memory)
                n++;
                a = next;
            }
        } catch (final Throwable t) {
            orphans.pushChain(a); // nothing is stranded: the rest waits for the next drain
            throw t;
        } finally {
            tc.count(ThreadCache.REMOTE_ABSORBED, n);
            if (n > Events.BACKLOG_THRESHOLD) {
                final Events.RemoteFreeBacklog e = new Events.RemoteFreeBacklog();
                e.frees = n;
                e.commit();
            }
        }
    }

    /** Hands a batch to the owner's inbox, or to the orphan inbox when that owner is gone. */
    void deliver(final int owner, final long first, final long last) {
        final ThreadCache[] ids = byId;
        final ThreadCache t = owner < ids.length ? ids[owner] : null;
        if (t == null || !t.inbox.push(first, last)) {
            orphans.push(first, last);
        }
    }

    /** A deferred free with no owner to send it to (counted as sent; absorbed by whoever drains orphans). */
    private void deliverOrphan(final ThreadCache tc, final long address) {
        tc.count(ThreadCache.REMOTE_SENT, 1);
        tc.count(ThreadCache.REMOTE_BATCHES, 1);
        orphans.push(address, address);
    }

    // ------------------------------------------------------------------------------- threads

    /** @return the cache of size class {@code cls}. */
    SlabCache cache(final int cls) {
        return caches[cls];
    }

    private ThreadCache threadCache() {
        final ThreadCache tc = local.get();
        return tc != null ? tc : attach(Thread.currentThread());
    }

    /** First use on a thread, or its thread-locals were wiped (ForkJoinPool does that). */
    private ThreadCache attach(final Thread t) {
        ThreadCache tc = byThread.get(t);
        if (tc == null) {
            if (isVirtual(t) || closed) {
                // no private cache after close: nobody would adopt it when the thread ends
                tc = sharedCache;
            } else if (JdkInternals.isGcCleanerThread(t)) { // Reference Handler (17-25), BufferCleaner (26+)
                tc = gcCache;
            } else {
                tc = register(t, ThreadCache.CACHING);
                byThread.put(t, tc);
            }
        }
        local.set(tc);
        return tc;
    }

    private ThreadCache register(final Thread t, final int kind) {
        synchronized (registryLock) {
            final int id = freeIds.isEmpty() ? nextId++ : freeIds.remove(freeIds.size() - 1);
            final ThreadCache tc = new ThreadCache(this, id, t, kind);
            ThreadCache[] ids = byId;
            if (id >= ids.length) {
                ids = java.util.Arrays.copyOf(ids, Math.max(id + 1, ids.length * 2));
            } else {
                ids = ids.clone();
            }
            ids[id] = tc;
            byId = ids;
            return tc;
        }
    }

    private static boolean isVirtual(final Thread t) {
        try {
            return IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (final Throwable e) {
            return false;
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                MethodType.methodType(boolean.class));
        } catch (final ReflectiveOperationException e) {
            return null; // JDK 17: no virtual threads
        }
    }

    private void reapLoop() {
        while (!closed) {
            try {
                Thread.sleep(config.reapIntervalMillis());
                reap();
            } catch (final InterruptedException e) {
                return;
            } catch (final Throwable t) {
                hookFailures.increment();
            }
        }
    }

    /**
     * One reaper pass, as Linux's slab {@code cache_reap}: adopts the caches of threads that have ended, returns
     * orphaned frees to their slabs, and gives memory back to the JDK's budget:
     * <ul>
     *   <li>after threads ended, or when nothing was allocated or freed since the previous pass (idle):
     *       depots and spare slabs are flushed and empty chunks beyond {@code retainedEmptyChunks}
     *       released, so a burst followed by quiet does not keep its peak reserved;</li>
     *   <li>otherwise only chunks already wholly empty beyond {@code retainedEmptyChunks} are released
     *       (the working set's depots stay warm).</li>
     * </ul>
     * Magazines of live threads are their owners' alone and stay as they are (at most
     * {@code 2 * magazineRounds} objects per size class and thread, fewer above 4 KiB).
     * Serialised: a caller returns only after any reap in progress (the reaper thread's) is done.
     */
    synchronized void reap() {
        boolean retiredAny = false;
        for (final ThreadCache tc : byThread.values()) {
            // remove first: the reaper thread and trim() callers may reap at the same time
            if (!tc.thread.isAlive() && byThread.remove(tc.thread, tc)) {
                retire(tc);
                retiredAny = true;
            }
        }
        returnOrphans();
        final long activity = activity();
        if (retiredAny || activity == activityAtLastReap) {
            shrink(config.retainedEmptyChunks());
        } else {
            pages.releaseEmptyChunks(config.retainedEmptyChunks());
        }
        activityAtLastReap = activity;
    }

    /** Bytes allocated plus bytes freed so far, over every thread cache (racy reads: a hint for {@link #reap()}). */
    private long activity() {
        synchronized (registryLock) {
            long sum = retired[ThreadCache.ALLOC_BYTES] + retired[ThreadCache.FREE_BYTES];
            for (final ThreadCache tc : byId) {
                if (tc != null) {
                    sum += tc.stats[ThreadCache.ALLOC_BYTES] + tc.stats[ThreadCache.FREE_BYTES];
                }
            }
            return sum;
        }
    }

    private void retire(final ThreadCache tc) {
        final long chain = tc.inbox.close();
        tc.flushOutgoing();
        giveBackAll(tc, reaperCache);
        returnToSlabs(chain, reaperCache);
        synchronized (registryLock) {
            for (int i = 0; i < retired.length; i++) {
                retired[i] += tc.stats[i];
            }
            threadCachesRetired++;
            final ThreadCache[] ids = byId.clone();
            ids[tc.id] = null;
            byId = ids;
            freeIds.add(tc.id);
        }
    }

    /**
     * Returns every object {@code tc} caches (both magazines of every size class) to its slab and
     * unfreezes its slabs. Called by the reaper for a thread that ended, or by {@code tc}'s own thread.
     */
    private void giveBackAll(final ThreadCache tc, final ThreadCache me) {
        for (int cls = 0; cls < caches.length; cls++) {
            final SlabCache c = caches[cls];
            c.lock.lock();
            try {
                final Slab s = tc.current[cls];
                if (s != null) {
                    tc.current[cls] = null;
                    c.unfreezeLocked(s);
                }
                c.flushLocked(tc.loaded[cls], me);
                c.flushLocked(tc.previous[cls], me);
            } finally {
                c.lock.unlock();
            }
        }
    }

    /**
     * A request this allocator does not serve is about to take the JDK's own path. When it would not
     * fit under {@code MaxDirectMemorySize} now, give back what kmem4j caches first (the caller's own
     * magazines and frozen slabs, every depot and spare slab, every empty chunk), so that the JDK's
     * reservation, which reclaims only with GC, can use that memory (C1: without this, a program that had
     * freed everything got an {@code OutOfMemoryError} the JDK alone did not throw). Costs one
     * try-reservation (a CAS on the JDK's counter) per fallback; nothing unless the budget is short.
     */
    private void relieveBudgetFor(final int capacity) {
        try {
            if (JdkInternals.tryReserveDirectMemory(capacity)) {
                JdkInternals.unreserveDirectMemory(capacity);
                return;
            }
            final ThreadCache tc = threadCache();
            if (tc.busy) {
                return;
            }
            final Events.BudgetPressure event = new Events.BudgetPressure();
            event.begin();
            event.cache = "(above the largest size class)";
            tc.busy = true;
            try {
                if (tc.kind == ThreadCache.CACHING) {
                    tc.flushOutgoing();
                    absorbRemoteFrees(tc);
                    giveBackAll(tc, tc);
                }
                event.releasedBytes = trim();
            } finally {
                tc.busy = false;
                event.commit();
            }
        } catch (final Throwable t) {
            hookFailures.increment(); // never in the way of the JDK's own path
        }
    }

    private void returnOrphans() {
        if (orphans.nonEmpty()) {
            returnToSlabs(orphans.takeAll(), reaperCache);
        }
    }

    /**
     * A deferred free arrives: clear its link word, or with {@code zeroOnFree} the whole object (remote
     * and GC-driven frees are not zeroed by the sender, so the Reference Handler never zeroes).
     */
    private void clearDeferred(final long address, final int objectSize) {
        if (zeroOnFree) {
            Zeroing.zero(address, objectSize);
        } else {
            RemoteInbox.unlink(address);
        }
    }

    private void returnToSlabs(final long chain, final ThreadCache me) {
        long n = 0;
        final Chunk[] hint = new Chunk[1];
        for (long a = chain; a != 0; ) {
            final long next = RemoteInbox.next(a);
            final Slab s = slabOf(a, hint);
            clearDeferred(a, s.objectSize);
            s.cache.lock.lock();
            try {
                s.cache.returnObjectLocked(s, a, me);
            } finally {
                s.cache.lock.unlock();
            }
            n++;
            a = next;
        }
        me.count(ThreadCache.REMOTE_ABSORBED, n);
    }

    /** @return the slab holding {@code address}, which must be ours; {@code hint[0]} caches the chunk. */
    Slab slabOf(final long address, final Chunk[] hint) {
        Chunk c = hint[0];
        if (c == null || !c.contains(address)) {
            c = pages.map.find(address);
            hint[0] = c;
        }
        return c.slabs[c.head[c.pageOf(address)]];
    }

    // ------------------------------------------------------------------------------- invariants

    /**
     * Verifies the allocator's accounting equations (the debug-mode check; mimalloc style):
     * <pre>
     *   per slab:  objects == inuse + free_in_bitmap
     *   per cache: sum(inuse) == live buffers + in magazines + in depot + in remote batches and inboxes
     * </pre>
     * Only meaningful when no other thread is using the allocator (tests call it after joining their
     * threads).
     *
     * @throws IllegalStateException naming the slab or cache and the figures that disagree
     */
    void checkInvariants() {
        final AllocatorStats s = stats();
        final long[] held = new long[caches.length];
        final Chunk[] hint = new Chunk[1];
        final java.util.function.LongConsumer countPending = a -> held[slabOf(a, hint).cache.classIndex]++;
        for (final ThreadCache tc : byId) {
            if (tc == null) {
                continue;
            }
            if (tc.kind == ThreadCache.CACHING) {
                for (int c = 0; c < caches.length; c++) {
                    held[c] += tc.loaded[c].count + tc.previous[c].count;
                }
            }
            tc.forEachPending(countPending);
            tc.inbox.forEach(countPending);
        }
        orphans.forEach(countPending);
        final long[] inuse = new long[caches.length];
        for (final Chunk chunk : pages.map.chunks()) {
            for (int p = 0; p < chunk.pages; p++) {
                final Slab slab = chunk.slabs[p];
                if (slab == null || slab.headPage != p) {
                    continue;
                }
                slab.check();
                inuse[slab.cache.classIndex] += slab.inuse();
            }
        }
        for (final SlabCache c : caches) {
            c.lock.lock();
            try {
                held[c.classIndex] += c.heldObjectsLocked();
            } finally {
                c.lock.unlock();
            }
            final long live = s.caches().get(c.classIndex).activeObjects();
            if (inuse[c.classIndex] != live + held[c.classIndex]) {
                throw new IllegalStateException("cache invariant broken: " + c.name + " inuse=" + inuse[c.classIndex]
                    + " live=" + live + " held=" + held[c.classIndex]);
            }
        }
    }

    // ------------------------------------------------------------------------------- trim, stats

    /**
     * Returns memory to the JDK: the caches of ended threads are adopted, orphaned frees go back to
     * their slabs, every depot is flushed, spare slabs are freed and wholly empty chunks are released. Objects held in live threads' magazines
     * and frozen slabs stay (they belong to those threads).
     *
     * @return bytes of chunk memory released
     */
    public long trim() {
        trims.increment();
        reap();
        return shrink(0);
    }

    /** Flushes depots, frees spare slabs and releases empty chunks beyond {@code keepChunks}. */
    private long shrink(final int keepChunks) {
        for (final SlabCache c : caches) {
            c.lock.lock();
            try {
                c.shrinkLocked(reaperCache);
            } finally {
                c.lock.unlock();
            }
        }
        return pages.releaseEmptyChunks(keepChunks);
    }

    /** @return a snapshot of the statistics, summed over all thread caches. */
    public AllocatorStats stats() {
        final long[] sum;
        final int live;
        final long retiredCount;
        synchronized (registryLock) {
            sum = retired.clone();
            int n = 0;
            for (final ThreadCache tc : byId) {
                if (tc != null) {
                    for (int i = 0; i < sum.length; i++) {
                        sum[i] += tc.stats[i];
                    }
                    if (tc.kind == ThreadCache.CACHING) {
                        n++;
                    }
                }
            }
            live = n;
            retiredCount = threadCachesRetired;
        }
        final List<CacheStats> cs = new ArrayList<>(caches.length);
        long allocs = 0;
        long hits = 0;
        long misses = 0;
        for (final SlabCache c : caches) {
            final int b = ThreadCache.classBase(c.classIndex);
            final long a = sum[b + ThreadCache.ALLOCS];
            final long f = sum[b + ThreadCache.FREES];
            allocs += a;
            hits += sum[b + ThreadCache.HITS];
            misses += sum[b + ThreadCache.MISSES];
            final long slabs;
            final long partial;
            final long depot;
            c.lock.lock();
            try {
                slabs = c.slabs;
                partial = c.partialSlabsLocked();
                depot = c.depotObjectsLocked();
            } finally {
                c.lock.unlock();
            }
            cs.add(new CacheStats(c.name, c.id, c.objectSize, c.objectsPerSlab, c.slabPages, slabs, partial,
                a - f, slabs * c.objectsPerSlab, a, f, sum[b + ThreadCache.HITS], sum[b + ThreadCache.MISSES],
                c.depotExchanges, depot, a == 0 ? 0 : (double) sum[b + ThreadCache.ASCENDING] / a, c.doubleFrees));
        }
        return new AllocatorStats(allocs, sum[ThreadCache.EXPLICIT_FREES], sum[ThreadCache.GC_FREES],
            sum[ThreadCache.ALLOC_BYTES] - sum[ThreadCache.FREE_BYTES], pages.reservedBytes(), fallbacks.sum(),
            sum[ThreadCache.REMOTE_SENT], sum[ThreadCache.REMOTE_ABSORBED], sum[ThreadCache.REMOTE_BATCHES],
            hits, misses, pages.chunkCount(), pages.chunksAllocated(), pages.chunksReleased(), trims.sum(), live,
            retiredCount, CacheTable.used(), hookFailures.sum(), allocationFailures.sum(),
            leakDetector == null ? 0 : leakDetector.leaks(),
            explicitDoubleFrees.sum() + cs.stream().mapToLong(CacheStats::doubleFrees).sum(), List.copyOf(cs));
    }

    /**
     * Stops serving new buffers (later requests fall back to the JDK), stops the reaper, adopts the
     * caches of ended threads and trims. Caches left with no slab give their cache ids back; buffers
     * already handed out stay valid and are still released normally (their caches keep their ids).
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reaper.interrupt();
        reap();
        trim();
        for (final SlabCache c : caches) {
            c.retireIfEmpty();
        }
    }
}
