package io.kmem4j.agent.bridge;

import java.lang.ref.Reference;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined at the start of the JDK cleaner's {@code clean()}: a cleaner carrying kmem4j's
 * mark (see {@code io.kmem4j.core.OwnedLifecycle}) is outside the JDK's cleaner list, so its thunk
 * runs without the list's monitor and the JDK's body is skipped; every other cleaner runs the JDK's
 * body unchanged (one field load and one compare more). The thunk, kmem4j's release hook, runs at
 * most once by itself and never throws. Only bootstrap types are used: the mark arrives through
 * {@link CleanerMark} as the value of the bridge's static volatile field.
 */
final class CleanerAdvice {
    private CleanerAdvice() {
    }

    /** {@code jdk.internal.ref.Cleaner.clean()}, JDK 17-25: the mark is in {@code prev}, the thunk in {@code thunk}. */
    static final class ListCleaner {
        private ListCleaner() {
        }

        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.FieldValue("prev") final Object prev, @Advice.FieldValue("thunk") final Runnable thunk,
                             @CleanerMark final Object mark) {
            if (prev != null && prev == mark) {
                thunk.run();
                return true;
            }
            return false;
        }
    }

    /**
     * {@code java.nio.BufferCleaner$PhantomCleaner.clean()}, JDK 26+: the mark is in {@code node}, the
     * thunk in {@code action}; the reference is cleared first, as the JDK's body does.
     */
    static final class PhantomCleaner {
        private PhantomCleaner() {
        }

        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This final Object self, @Advice.FieldValue("node") final Object node,
                             @Advice.FieldValue("action") final Runnable action, @CleanerMark final Object mark) {
            if (node != null && node == mark) {
                ((Reference<?>) self).clear();
                action.run();
                return true;
            }
            return false;
        }
    }
}
