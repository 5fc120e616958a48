package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Helping the JDK run the cleaners of buffers GC found unreachable, before growing: what the JDK's
 * {@code java.nio.Bits.reserveMemory} does before it reserves more (JDK 17-25: wait while the
 * "Reference Handler" has pending references to process, {@code JavaLangRefAccess.waitForReferenceProcessing};
 * JDK 26+: also run pending buffer cleaners on the calling thread, {@code BufferCleaner.tryCleaning}).
 * A tracked buffer dropped to GC comes back through its cleaner; growing the page heap while such
 * cleaners are pending would make kmem4j hold more than the JDK would.
 *
 * <p>And, at the limit ({@link AtTheLimit}), asking for the collection the JDK would run there,
 * shared between the threads that need it ({@link #collectUnlessOneStartedSince}).
 *
 * <p>{@link #help(ThreadCache)} is cheap when nothing is pending (one monitor and one test); it waits only while
 * the JDK is processing references that GC already found. Needs {@code jdk.internal.access} exported to this
 * module (the agent exports it) and, on 26+, {@code java.nio} opened; without, {@link #help(ThreadCache)} does
 * nothing. Threads: any, but never the GC cleaner thread (it would wait for itself).
 */
final class ReferenceProcessing {
    private static final MethodHandle WAIT; // () boolean: JavaLangRefAccess.waitForReferenceProcessing, bound
    private static final MethodHandle TRY_CLEANING; // () boolean: BufferCleaner.tryCleaning (26+), or null

    static {
        MethodHandle wait = null;
        MethodHandle tryCleaning = null;
        try {
            final Class<?> secrets = Class.forName("jdk.internal.access.SharedSecrets");
            final Object jlra = secrets.getMethod("getJavaLangRefAccess").invoke(null);
            final Class<?> type = Class.forName("jdk.internal.access.JavaLangRefAccess");
            wait = MethodHandles.lookup().findVirtual(type, "waitForReferenceProcessing",
                MethodType.methodType(boolean.class)).bindTo(jlra);
        } catch (final Throwable unavailable) {
            wait = null;
        }
        try {
            final Class<?> bufferCleaner = Class.forName("java.nio.BufferCleaner");
            tryCleaning = MethodHandles.privateLookupIn(bufferCleaner, MethodHandles.lookup())
                .findStatic(bufferCleaner, "tryCleaning", MethodType.methodType(boolean.class));
        } catch (final Throwable before26) {
            tryCleaning = null;
        }
        WAIT = wait;
        TRY_CLEANING = tryCleaning;
    }

    /** Held by the one thread running a requested collection; the others wait for its outcome. */
    private static final ReentrantLock COLLECTING = new ReentrantLock();
    /** Collections requested here that have started (written under COLLECTING). */
    private static volatile long started;

    private ReferenceProcessing() {
    }

    /**
     * @return collections requested here that have started so far: read it before a failed attempt
     *         and pass it to {@link #collectUnlessOneStartedSince}
     */
    static long collectionsStarted() {
        return started;
    }

    /**
     * Waits for a collection another thread is running now, if any, and helps the cleaners it found.
     *
     * @param tc the calling thread's cache, or {@code null} (see {@link #help(ThreadCache)})
     * @return true when there was one (frees may have come back: try again before asking for another)
     */
    static boolean awaitRunningCollection(final ThreadCache tc) {
        if (!COLLECTING.isLocked() || COLLECTING.isHeldByCurrentThread()) {
            return false;
        }
        COLLECTING.lock();
        COLLECTING.unlock();
        help(tc);
        return true;
    }

    /**
     * Asks for the collection the JDK itself would run now, and helps the cleaners it finds run: for a
     * request that neither kmem4j's slabs nor the JDK's path can serve without reclaiming, where the
     * JDK's {@code Bits.reserveMemory} calls {@code System.gc()} ({@link AtTheLimit}). kmem4j's chunks
     * are then usually full of buffers the program dropped and GC has not found yet.
     *
     * <p>One at a time, and shared as HotSpot shares {@code System.gc()} calls: when a collection
     * requested here started after the caller read {@code seen} (before its failed attempt), it is
     * the caller's too, and none is run again (the caller waits for it if it still runs). A collection
     * that was already running when the caller failed is not: it may not see what the caller's
     * thread dropped since. There is no other limit on the rate (the JDK has none: a program at its
     * limit collects at every failed reservation). {@code -XX:+DisableExplicitGC} makes the request
     * do nothing, as it does the JDK's. Never on the GC cleaner thread (it would wait for itself).
     *
     * @param seen {@link #collectionsStarted()} as the caller read it before its failed attempt
     * @param tc   the calling thread's cache, or {@code null} (see {@link #help(ThreadCache)})
     * @return nanoseconds the {@code System.gc()} call run here took (at least 1), or 0 when none ran here
     */
    static long collectUnlessOneStartedSince(final long seen, final ThreadCache tc) {
        if (JdkInternals.isGcCleanerThread(Thread.currentThread())) {
            return 0;
        }
        long nanos = 0;
        COLLECTING.lock();
        try {
            if (started == seen) {
                started = seen + 1;
                final long start = System.nanoTime();
                System.gc();
                nanos = Math.max(1, System.nanoTime() - start);
            }
        } finally {
            COLLECTING.unlock();
        }
        help(tc);
        return nanos;
    }

    /**
     * Runs or waits for the cleaners the JDK has pending, a bounded number of rounds. The frees the
     * cleaners run on this thread (26+) are counted as GC frees ({@link ThreadCache#GC_FREES_HELPED}).
     *
     * @param tc the calling thread's cache, or {@code null}
     * @return true when some were pending (frees may have come back: look again before growing)
     */
    static boolean help(final ThreadCache tc) {
        boolean progress = false;
        final boolean counted = tc != null && tc.kind == ThreadCache.CACHING; // one thread's own: its frees now are GC's
        try {
            for (int round = 0; round < 16; round++) {
                boolean any = false;
                if (TRY_CLEANING != null) {
                    if (counted) {
                        tc.runningGcCleaners = true;
                    }
                    try {
                        while ((boolean) TRY_CLEANING.invokeExact()) {
                            any = true;
                        }
                    } finally {
                        if (counted) {
                            tc.runningGcCleaners = false;
                        }
                    }
                }
                if (WAIT != null && (boolean) WAIT.invokeExact()) {
                    any = true;
                }
                if (!any) {
                    break;
                }
                progress = true;
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt(); // keep the status; the caller goes on
        } catch (final Throwable t) {
            return progress;
        }
        return progress;
    }
}
