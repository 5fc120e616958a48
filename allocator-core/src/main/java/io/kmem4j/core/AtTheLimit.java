package io.kmem4j.core;

/**
 * A request meets the direct-memory limit: kmem4j's slabs have no free object, no chunk fits under
 * {@code -XX:MaxDirectMemorySize}, and the JDK's own path could not serve it without reclaiming
 * either. Here kmem4j does for its own memory what the JDK's {@code java.nio.Bits.reserveMemory}
 * does for the JDK's (read in JDK 17 and 25; 26+ adds running pending buffer cleaners on the
 * caller, which {@link ReferenceProcessing#help(ThreadCache)} does too):
 *
 * <pre>
 *   while the JDK's reference processing is active:  help it, try again
 *   a collection another thread runs now: wait for it, try again
 *   the collection the JDK would run (System.gc(); shared with every thread whose request failed before it started)
 *   back-off: sleep 1, 2, 4 ... 256 ms (about 0.5 s in all) while nothing is pending, trying again each
 *             time, after giving back what kmem4j caches (threads that ended meanwhile kept what GC freed)
 *   one last collection, unless one started since the last try, and one last try
 * </pre>
 *
 * <p>The last collection is one the JDK would run anyway: the request would go to the JDK's path,
 * whose {@code Bits} collects before it throws, and the buffers that collection finds would come
 * back to kmem4j's slabs, out of that request's reach. Run here, it serves the request from what
 * other threads dropped during the back-off after the first collection had passed (they took what
 * it gave back, dropped it and ended: CI, once in some 20 runs of four threads at the limit).
 * A request that truly does not fit then still goes to the JDK's path, which runs its own
 * {@code System.gc()} and back-off before it throws: such a request costs up to three collections
 * and about twice the JDK's half second, where the JDK alone spends one and one.
 *
 * Why kmem4j cannot leave this to the JDK: the buffers GC finds come back to kmem4j's slabs, never
 * to the JDK's account, so the JDK's loop, run for a request kmem4j passed on, would collect, wait
 * its half second and throw an {@code OutOfMemoryError} the JDK alone would not have thrown
 * (a program dropping 16 KiB buffers on four threads at {@code MaxDirectMemorySize=64m} did so in
 * one run of three on a busy machine). Each try ({@link Attempt}) takes in the frees that came back
 * and carves or grows as usual; the JDK's path takes the request as soon as it fits under the limit
 * there (the JDK's own buffers were freed), as {@code Bits} would then reserve it at once.
 *
 * <p>Interrupts are deferred, as in {@code Bits}: the thread's interrupt status is cleared for the
 * waits and set again before returning. Threads: any allocating thread, platform or virtual; never
 * the GC cleaner thread (it only frees). No kmem4j lock is held by the caller.
 */
final class AtTheLimit {
    /** Sleeps of the back-off (1, 2, 4 ... 256 ms), as {@code Bits.MAX_SLEEPS}. */
    static final int MAX_SLEEPS = 9;

    /** One more try at serving the request from kmem4j's memory. */
    @FunctionalInterface
    interface Attempt {
        /** @return an object's address, or 0 when kmem4j still has none */
        long serve();
    }

    private AtTheLimit() {
    }

    /**
     * Reclaims as the JDK would, trying {@code attempt} after each step.
     *
     * @param tc      the requesting thread's cache (the frees it runs helping the JDK count as GC frees)
     * @param bytes   the request's size, for the test whether the JDK's path could serve it now
     * @param attempt tries kmem4j's memory again
     * @param relieve gives back what kmem4j caches (the caches of threads that ended meanwhile hold
     *                what GC gave back to them), before each try of the back-off
     * @return the address {@code attempt} gave, or 0: the JDK's path serves the request (it fits there
     *         now, or nothing came back within the back-off and the last collection: then the JDK's path runs its own loop and
     *         throws its own {@code OutOfMemoryError})
     */
    static long reclaim(final ThreadCache tc, final long bytes, final Attempt attempt, final Runnable relieve) {
        boolean interrupted = Thread.interrupted();
        try {
            final long seen = ReferenceProcessing.collectionsStarted();
            boolean active;
            do {
                active = ReferenceProcessing.help(tc);
                if (Thread.interrupted()) {
                    interrupted = true;
                    active = true; // as Bits: an interrupted wait is tried again
                }
                final long a = attempt.serve();
                if (a != 0) {
                    return a;
                }
                if (JdkInternals.fitsUnderTheLimit(bytes)) {
                    return 0;
                }
                // another thread's collection, already running when this request failed, may be enough;
                // one that started since is this request's own (collectUnlessOneStartedSince waits for it)
            } while (active || ReferenceProcessing.collectionsStarted() == seen && ReferenceProcessing.awaitRunningCollection(tc));
            ReferenceProcessing.collectUnlessOneStartedSince(seen, tc);
            interrupted |= Thread.interrupted();
            long sleepMillis = 1;
            int sleeps = 0;
            boolean collectedAgain = false;
            for (;;) {
                final long before = ReferenceProcessing.collectionsStarted();
                final long a = attempt.serve();
                if (a != 0) {
                    return a;
                }
                if (JdkInternals.fitsUnderTheLimit(bytes)) {
                    return 0;
                }
                if (sleeps >= MAX_SLEEPS) {
                    if (collectedAgain) {
                        return 0;
                    }
                    // what other threads dropped during the back-off (and then ended, or stopped
                    // allocating) only a collection finds; the JDK's path would run one now and send
                    // its frees here, out of the request's reach: run it here, try once more
                    collectedAgain = true;
                    ReferenceProcessing.collectUnlessOneStartedSince(before, tc);
                    interrupted |= Thread.interrupted();
                    continue;
                }
                if (!ReferenceProcessing.help(tc)) {
                    try {
                        Thread.sleep(sleepMillis);
                        sleepMillis <<= 1; // as Bits: an interrupted sleep is not a step of the back-off
                        sleeps++;
                    } catch (final InterruptedException e) {
                        interrupted = true;
                    }
                    relieve.run();
                }
                interrupted |= Thread.interrupted();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
