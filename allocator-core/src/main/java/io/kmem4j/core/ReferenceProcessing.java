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
 * <p>Cheap when nothing is pending (one monitor and one test); it waits only while the JDK is
 * processing references that GC already found. Needs {@code jdk.internal.access} exported to this
 * module (the agent exports it) and, on 26+, {@code java.nio} opened; without, {@link #help()} does
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
    /** Shortest time between the end of one requested collection and the start of the next, ns. */
    static final long MIN_COLLECTION_INTERVAL_NANOS = 100_000_000L;
    /** {@link System#nanoTime()} before which no new collection is requested. */
    private static volatile long nextCollectionNanos = System.nanoTime();
    /** Longest wait after collections that gave nothing back, ns. */
    static final long MAX_COLLECTION_INTERVAL_NANOS = 5_000_000_000L;
    /** The wait after the last requested collection; doubles while they give nothing back (under COLLECTING or racy). */
    private static volatile long intervalNanos = MIN_COLLECTION_INTERVAL_NANOS;

    private ReferenceProcessing() {
    }

    /**
     * Reports whether the collection {@link #collect()} ran gave the caller memory back: when it did
     * not (everything at the limit is live), the wait before the next one doubles, up to {@value
     * #MAX_COLLECTION_INTERVAL_NANOS} ns, so that a program at its limit is not collected ten times
     * a second; when it did, the wait is back to its least.
     */
    static void collected(final boolean gaveBack) {
        final long next = gaveBack ? MIN_COLLECTION_INTERVAL_NANOS
            : Math.min(MAX_COLLECTION_INTERVAL_NANOS, intervalNanos * 2);
        if (!gaveBack) {
            nextCollectionNanos = System.nanoTime() + next;
        }
        intervalNanos = next;
    }

    /** @return the wait after the next requested collection, ns (tests) */
    static long intervalNanos() {
        return intervalNanos;
    }

    /** Tests: forgets the waits, as at start. */
    static void resetCollectionWaits() {
        intervalNanos = MIN_COLLECTION_INTERVAL_NANOS;
        nextCollectionNanos = System.nanoTime();
    }

    /** Tests: waits until {@link #collect()} may ask for a collection again. */
    static void awaitCollectionAllowed() throws InterruptedException {
        long wait;
        while ((wait = nextCollectionNanos - System.nanoTime()) > 0) {
            Thread.sleep(wait / 1_000_000 + 1);
        }
    }

    /**
     * Asks for the collection the JDK itself would run now, and helps the cleaners it finds run: for
     * an allocation whose size class has no free object while kmem4j's chunks fill the whole
     * direct-memory budget. Such chunks are usually full of buffers the program dropped and GC has not
     * found yet. The JDK's {@code Bits.reserveMemory} calls {@code System.gc()} at this point too, but
     * then sleeps (up to about 0.5 s) until memory comes back to the JDK's account, which kmem4j's
     * frees never do: they come back to kmem4j's slabs. So kmem4j collects itself and takes back
     * what GC freed, instead of passing the request to that loop.
     *
     * <p>At most one collection at a time: a thread arriving while one runs waits for it and shares its
     * outcome. After one, none is requested again for twice its duration or {@value
     * #MIN_COLLECTION_INTERVAL_NANOS} ns, whichever is longer, and longer still while collections
     * give nothing back ({@link #collected}): a program whose buffers are all live at the limit
     * would otherwise collect at every allocation. {@code -XX:+DisableExplicitGC}
     * makes the request do nothing, as it does the JDK's. Never on the GC cleaner thread.
     *
     * @return true when a collection ran (or was waited for): frees may have come back
     */
    static boolean collect() {
        if (System.nanoTime() - nextCollectionNanos < 0 || JdkInternals.isGcCleanerThread(Thread.currentThread())) {
            return false;
        }
        if (!COLLECTING.tryLock()) {
            COLLECTING.lock(); // another thread collects: wait for it, then take what it freed
            COLLECTING.unlock();
            help();
            return true;
        }
        try {
            final long start = System.nanoTime();
            if (start - nextCollectionNanos < 0) {
                return true; // one ended while this thread got the lock
            }
            System.gc();
            help();
            final long end = System.nanoTime();
            nextCollectionNanos = end + Math.max(intervalNanos, 2 * (end - start));
            return true;
        } finally {
            COLLECTING.unlock();
        }
    }

    /**
     * Runs or waits for the cleaners the JDK has pending, a bounded number of rounds.
     *
     * @return true when some were pending (frees may have come back: look again before growing)
     */
    static boolean help() {
        boolean progress = false;
        try {
            for (int round = 0; round < 16; round++) {
                boolean any = false;
                if (TRY_CLEANING != null) {
                    while ((boolean) TRY_CLEANING.invokeExact()) {
                        any = true;
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
