package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Which {@link ThreadCache} serves the calling thread, and the bookkeeping of every thread cache
 * that exists: ids, the statistics of ended threads, the three shared instances.
 *
 * <pre>
 *   platform thread      ─first use─▶ its own CACHING cache (ThreadLocal; also found by Thread when a
 *                                     pool wiped its thread-locals)
 *   GC cleaner thread    ───────────▶ gc       (DEFERRING: frees batched per owner, never a lock, never a wait)
 *   virtual thread       ───────────▶ shared   (SHARED: one object under the cache lock)
 *   reaper, trim callers ───────────▶ reaper   (acts for ended threads; never caches)
 * </pre>
 *
 * <p>Ids are small integers (a frozen slab's owner word holds one), reused after their thread
 * ended and its cache was retired (see {@link RemoteFrees} for why a reused id is harmless).
 *
 * <p>Threads: {@link #current()} from any thread, lock-free after a thread's first call.
 * Registration, retirement and the statistics sum take this registry's lock, a leaf lock (nothing
 * else is taken under it except {@link RemoteFrees}' table update).
 */
final class ThreadRegistry {
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private final ThreadLocal<ThreadCache> local = new ThreadLocal<>();
    /** The carrier's cache as seen from a virtual thread (JDK 21+, see {@link Carriers}); {@code null} when unavailable. */
    private final ThreadLocal<ThreadCache> carrierLocal = Carriers.newLocal();
    private final Map<Thread, ThreadCache> byThread = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private final SlabCache[] caches;
    private final RemoteFrees remote;
    // under lock
    private ThreadCache[] byId = new ThreadCache[64];
    private final ArrayList<Integer> freeIds = new ArrayList<>();
    private int nextId = 1;
    private final long[] retired;
    private long retiredCaches;
    /** Set by {@link #close()}: threads new after it get no private cache (nobody would adopt it). */
    private volatile boolean closed;

    /** The GC cleaner thread's cache ({@link ThreadCache#DEFERRING}). */
    final ThreadCache gc;
    /** Every virtual thread's cache ({@link ThreadCache#SHARED}); also the cache of threads new after close. */
    final ThreadCache shared;
    /** What virtual threads get from {@link #current()} ({@link ThreadCache#SHARED}): they are served from their carrier's cache. */
    final ThreadCache virtual;
    /** The reaper's and {@code trim()} callers' cache ({@link ThreadCache#SHARED}; never holds objects). */
    final ThreadCache reaper;

    ThreadRegistry(final SlabCache[] caches, final RemoteFrees remote) {
        this.caches = caches;
        this.remote = remote;
        this.retired = new long[ThreadCache.SCALARS + caches.length * ThreadCache.CLASS_STRIDE];
        this.gc = register(null, ThreadCache.DEFERRING);
        this.shared = register(null, ThreadCache.SHARED);
        this.virtual = carrierLocal == null ? shared : register(null, ThreadCache.SHARED);
        this.reaper = register(null, ThreadCache.SHARED);
    }

    /** @return the calling thread's cache: one {@code ThreadLocal} lookup after the first call. */
    ThreadCache current() {
        final ThreadCache tc = local.get();
        return tc != null ? tc : attach(Thread.currentThread());
    }

    /** First use on a thread, or its thread-locals were wiped (ForkJoinPool does that). */
    private ThreadCache attach(final Thread t) {
        ThreadCache tc = byThread.get(t);
        if (tc == null) {
            if (closed) {
                tc = shared;
            } else if (isVirtual(t)) {
                tc = virtual;
            } else if (JdkInternals.isGcCleanerThread(t)) {
                tc = gc;
                gc.bindBatchingThread(t);
            } else {
                tc = byThread.computeIfAbsent(t, p -> register(p, ThreadCache.CACHING));
            }
        }
        local.set(tc);
        return tc;
    }

    /**
     * For a virtual thread: the cache of the carrier it runs on now (registered on first use), whose
     * magazines it may pop or push until it next blocks (see {@link Carriers}).
     *
     * @return the carrier's cache, or {@code null} (unavailable, closed, or the thread moved to
     *         another carrier while the cache was being registered: use the shared tier this time)
     */
    ThreadCache carrierCache() {
        final ThreadLocal<ThreadCache> cl = carrierLocal;
        if (cl == null || closed) {
            return null;
        }
        final ThreadCache tc = cl.get();
        if (tc != null) {
            return tc;
        }
        final Thread carrier = Carriers.current();
        if (carrier == null) {
            return null;
        }
        final ThreadCache registered = byThread.computeIfAbsent(carrier, p -> register(p, ThreadCache.CACHING));
        if (Carriers.current() != carrier) {
            return null; // registering blocked and this virtual thread moved: the cache is not this carrier's
        }
        // never revoked from now on; a revocation already begun (the reaper read carrier=false) wins this once
        if (!registered.becomeCarrier()) {
            return null;
        }
        cl.set(registered);
        return registered;
    }

    /** Registers a cache for {@code t} (or a shared kind for {@code null}); package-private for tests. */
    ThreadCache register(final Thread t, final int kind) {
        synchronized (lock) {
            final int id = freeIds.isEmpty() ? nextId++ : freeIds.remove(freeIds.size() - 1);
            final ThreadCache tc = new ThreadCache(id, t, kind, caches, remote);
            if (id >= byId.length) {
                byId = Arrays.copyOf(byId, Math.max(id + 1, byId.length * 2));
            }
            byId[id] = tc;
            remote.openLocked(id, tc.inbox);
            return tc;
        }
    }

    /** Makes {@code tc} the calling thread's cache (tests: a platform thread acting as a virtual one). */
    void bindCurrent(final ThreadCache tc) {
        local.set(tc);
    }

    /** @return the cache of a platform thread that has one, or {@code null} (tests). */
    ThreadCache of(final Thread t) {
        return byThread.get(t);
    }

    /**
     * Takes the caches of threads that have ended out of the thread map, for the reaper to empty and
     * {@link #forget}. Each is returned once, whoever calls (the reaper thread and trim callers may
     * race).
     */
    List<ThreadCache> takeEnded() {
        final List<ThreadCache> ended = new ArrayList<>();
        for (final ThreadCache tc : byThread.values()) {
            if (!tc.thread.isAlive() && byThread.remove(tc.thread, tc)) {
                ended.add(tc);
            }
        }
        return ended;
    }

    /** An ended thread's cache {@link #takeEnded taken} but not emptied (still borrowed): the next pass takes it again. */
    void putBackEnded(final ThreadCache tc) {
        byThread.putIfAbsent(tc.thread, tc);
    }

    /** An ended thread's cache was emptied: keep its statistics, give its id back. */
    void forget(final ThreadCache tc) {
        synchronized (lock) {
            for (int i = 0; i < retired.length; i++) {
                retired[i] += tc.stats[i];
            }
            retiredCaches++;
            byId[tc.id] = null;
            remote.closeLocked(tc.id);
            freeIds.add(tc.id);
        }
    }

    /** Later threads share the {@link #shared} cache (the allocator closed). */
    void close() {
        closed = true;
    }

    /** Statistics summed over every thread cache that ever existed (racy reads of live ones). */
    record Totals(long[] stats, long gcFrees, int liveCaches, long retiredCaches) {
        /** @return bytes allocated minus bytes freed: the capacities of the live buffers */
        long bytesInUse() {
            return stats[ThreadCache.ALLOC_BYTES] - stats[ThreadCache.FREE_BYTES];
        }
    }

    /**
     * @return the sums; {@code gcFrees} is what the GC cleaner thread's cache counted as frees, and the
     *         GC frees other threads ran helping the JDK ({@link ThreadCache#GC_FREES_HELPED})
     */
    Totals totals() {
        synchronized (lock) {
            final long[] sum = retired.clone();
            // the GC cleaner thread's figures read once: the same frees in the sum and in gcFrees (read
            // twice, frees counted in between made explicit frees, frees - gcFrees, negative: a trial saw -1118)
            final long[] gcStats = gc.stats.clone();
            int live = 0;
            for (final ThreadCache tc : byId) {
                if (tc != null) {
                    final long[] st = tc == gc ? gcStats : tc.stats;
                    for (int i = 0; i < sum.length; i++) {
                        sum[i] += st[i];
                    }
                    if (tc.kind == ThreadCache.CACHING) {
                        live++;
                    }
                }
            }
            long gcFrees = 0;
            long frees = 0;
            for (int c = 0; c < caches.length; c++) {
                gcFrees += gcStats[ThreadCache.classBase(c) + ThreadCache.FREES];
                frees += sum[ThreadCache.classBase(c) + ThreadCache.FREES];
            }
            // plus the GC frees threads ran helping the JDK (26+); never more than the other frees read
            // (a racy read may see a thread's helped count before its class count)
            gcFrees += Math.max(0, Math.min(sum[ThreadCache.GC_FREES_HELPED], frees - gcFrees));
            return new Totals(sum, gcFrees, live, retiredCaches);
        }
    }

    /** @return bytes allocated plus bytes freed so far, over every thread cache (racy: a hint for the reaper). */
    long activity() {
        final long[] s = totals().stats();
        return s[ThreadCache.ALLOC_BYTES] + s[ThreadCache.FREE_BYTES];
    }

    /** @return the caches of live platform threads now (the reaper's look for idle ones) */
    List<ThreadCache> platformCaches() {
        return new ArrayList<>(byThread.values());
    }

    /** Calls {@code action} for every live thread cache, the shared kinds included (quiescent use: invariants). */
    void forEach(final Consumer<ThreadCache> action) {
        final ThreadCache[] ids;
        synchronized (lock) {
            ids = byId.clone();
        }
        for (final ThreadCache tc : ids) {
            if (tc != null) {
                action.accept(tc);
            }
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
}
