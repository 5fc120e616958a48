package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

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

    private ReferenceProcessing() {
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
