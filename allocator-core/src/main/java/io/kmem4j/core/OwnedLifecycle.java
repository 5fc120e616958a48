package io.kmem4j.core;

/**
 * The owned lifecycle of tracked buffers: their JDK cleaners are kept out of the JDK's global
 * cleaner list, so neither their birth nor their release takes the JDK-wide monitor every other
 * direct buffer takes ({@code jdk.internal.ref.Cleaner}'s on JDK 17-25, {@code java.nio.BufferCleaner}'s
 * list on 26+). Netty measured what that monitor costs a server: avoiding contention on cleaner
 * registration took a Netty 5 HTTP benchmark from 132k to 380k requests/s (netty/netty#12976).
 *
 * <p>Off by default. It needs the JDK cleaner's {@code clean()} rewritten (a java agent's
 * retransformation, method body only) so that a cleaner carrying {@link #mark()} passes itself to
 * its thunk ({@code ((Consumer) thunk).accept(this)}) without the list; the kmem4j agent does that,
 * checks it, then calls {@link #enable()}. Without
 * it, tracked buffers keep JDK cleaners in the JDK's list, as every direct buffer has. The
 * buffers are the same either way: {@code cleaner()} returns a cleaner of the JDK's own type,
 * {@code Unsafe.invokeCleaner}, {@code cleaner().clean()} and GC release them exactly once, views
 * keep them alive.
 *
 * <p>JVM-wide for this copy of the class; threads: any.
 */
public final class OwnedLifecycle {
    private static volatile boolean enabled;

    private OwnedLifecycle() {
    }

    /**
     * @return the object that marks kmem4j's cleaners: a cleaner whose {@code prev} field (JDK
     *         17-25, {@code jdk.internal.ref.Cleaner}) or {@code node} field (JDK 26+,
     *         {@code java.nio.BufferCleaner$PhantomCleaner}) is this object is kmem4j's, outside the
     *         JDK's list; {@code null} when this JDK, or the access given to this module, does not
     *         allow it ({@link #unavailableReason()})
     */
    public static Object mark() {
        return JdkCleaners.mark();
    }

    /** @return why the owned lifecycle cannot be used here, or {@code null} when it can. */
    public static String unavailableReason() {
        return JdkCleaners.failure();
    }

    /**
     * Switches it on: tracked buffers built from now on get cleaners outside the JDK's list. Call
     * only once the JDK cleaner's {@code clean()} runs a marked cleaner's thunk without the list
     * (see the class comment); buffers built before keep their JDK-listed cleaners.
     *
     * @throws IllegalStateException {@code "owned lifecycle unavailable: ..."} when {@link #mark()} is null
     */
    public static void enable() {
        final String failure = JdkCleaners.failure();
        if (failure != null) {
            throw new IllegalStateException("owned lifecycle unavailable: " + failure);
        }
        JdkCleaners.startCleaningThread();
        enabled = true;
    }

    /**
     * Switches it on with the mark another copy of kmem4j in this JVM (another class loader: an agent)
     * rewrote the JDK cleaner's {@code clean()} for: tracked buffers of this copy then get cleaners
     * carrying that mark. The rewrite is checked first ({@link #rewriteInPlace()}). Pass only a mark the
     * other copy published after its retransformation succeeded (the kmem4j agent puts it into
     * {@code java.nio.Kmem4jBridge.cleanerMark} only then): on JDK 26+ an unrewritten {@code clean()}
     * would take the mark for a node of the JDK's list.
     *
     * @param installed the other copy's {@link #mark()}
     * @throws IllegalArgumentException {@code "not a cleaner mark of this JDK: ..."}
     * @throws IllegalStateException {@code "owned lifecycle unavailable: ..."}
     */
    public static void enable(final Object installed) {
        final String failure = JdkCleaners.failure();
        if (failure != null) {
            throw new IllegalStateException("owned lifecycle unavailable: " + failure);
        }
        JdkCleaners.useMark(installed);
        if (!JdkCleaners.cleanRunsWithoutTheList()) {
            JdkCleaners.useMark(JdkCleaners.mark()); // back to this copy's own mark; still off
            throw new IllegalStateException("owned lifecycle unavailable: the JDK cleaner's clean() does not pass"
                + " cleaners carrying that mark to their thunk (an older kmem4j's rewrite?)");
        }
        enable();
    }

    /** @return true once {@link #enable()} was called. */
    public static boolean enabled() {
        return enabled;
    }

    /**
     * A check for the caller of {@link #enable()} that the rewrite is in place: a marked cleaner of a
     * throw-away object is cleaned twice; the JDK's list code must not have run. On JDK 26+ an
     * unrewritten {@code clean()} would take the mark for a node of its list, so call this only once
     * the retransformation reported success.
     *
     * @return true when the JDK cleaner's {@code clean()} runs marked cleaners without the JDK's list
     */
    public static boolean rewriteInPlace() {
        return JdkCleaners.cleanRunsWithoutTheList();
    }
}
