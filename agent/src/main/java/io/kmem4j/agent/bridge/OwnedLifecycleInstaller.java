package io.kmem4j.agent.bridge;

import java.lang.instrument.Instrumentation;

import io.kmem4j.core.OwnedLifecycle;
import io.kmem4j.core.UnsupportedJdkException;

/**
 * Switches on the owned lifecycle of kmem4j's tracked buffers ({@link OwnedLifecycle}): their JDK
 * cleaners stay out of the JDK's global cleaner list, so neither allocation nor release nor GC of a
 * kmem4j buffer takes the JDK-wide cleaner monitor. In this order, any failure leaving the JDK's
 * list in use (tracked buffers then work as every direct buffer does):
 * <ol>
 *   <li>the core makes the mark for this JDK (a cleaner, 17-25, or a cleaner-list node, 26+);</li>
 *   <li>the JDK cleaner's {@code clean()} is retransformed ({@link JdkClassTransformer#cleanerClean});
 *       its prologue does nothing while the bridge holds no mark;</li>
 *   <li>the mark goes into {@code java.nio.Kmem4jBridge.cleanerMark} (no cleaner carries it yet), so a
 *       copy of kmem4j that adopts the mark from there finds the rewrite in place;</li>
 *   <li>a throw-away marked cleaner is cleaned to prove the rewrite passes it to its thunk; when it
 *       does not, the mark is taken out of the bridge again (only that cleaner carried it);</li>
 *   <li>the core is told to build tracked buffers with marked cleaners from now on.</li>
 * </ol>
 * Once tracked buffers carry it, the mark is never taken back (their cleaners may live as long as the
 * JVM), and the transformer stays registered so that another agent's retransformation keeps the rewrite.
 */
public final class OwnedLifecycleInstaller {
    private OwnedLifecycleInstaller() {
    }

    /**
     * @param bridge the bridge's members
     * @return {@code null} when the owned lifecycle is on, else why not (for one log line)
     * @throws UnsupportedJdkException when this JDK's class files are newer than ByteBuddy reads: the
     *         agent as a whole stays off (one warning), not only the owned lifecycle
     */
    public static String install(final Instrumentation inst, final BootstrapBridge.Members bridge) {
        try {
            final Object mark = OwnedLifecycle.mark();
            if (mark == null) {
                return OwnedLifecycle.unavailableReason();
            }
            final Object present = bridge.cleanerMark.get();
            if (present != null && present != mark) {
                return "another copy of kmem4j in this JVM owns the JDK cleaner's rewrite";
            }
            JdkClassTransformer.cleanerClean(inst);
            bridge.cleanerMark.set(mark);
            if (!OwnedLifecycle.rewriteInPlace()) {
                bridge.cleanerMark.set(null);
                return "the JDK cleaner's clean() did not take the rewrite";
            }
            OwnedLifecycle.enable();
            return null;
        } catch (final UnsupportedJdkException tooNew) {
            throw tooNew;
        } catch (final Throwable t) {
            return t.toString();
        }
    }
}
