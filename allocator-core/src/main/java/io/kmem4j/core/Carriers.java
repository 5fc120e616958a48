package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The carrier thread of a virtual thread (JDK 21+), so that virtual threads are served from their
 * carrier's magazines: {@code jdk.internal.misc.CarrierThreadLocal} (a thread-local whose value
 * belongs to the carrier, not the virtual thread) and {@code JavaLangAccess.currentCarrierThread()}.
 *
 * <p>Why it is safe: a virtual thread takes its carrier's cache for the pop or push with one CAS
 * ({@link ThreadCache#borrow()}), so the magazines have one user at a time even when a virtual
 * thread unmounts in the middle of the operation and goes on elsewhere (it parks, waits for a
 * monitor, or, on JDK 26+, waits for another thread's class initialization, JDK-8369238). The
 * carrier itself, when it runs its own code (a pool's worker loop, a thread-local's clean-up at its
 * exit), borrows its cache the same way ({@link ThreadCache#CARRIER}). Anything that may block (a
 * lock, growing the page heap, flushing to slabs) is never done on a carrier's cache by a virtual
 * thread; it takes the shared tier instead. The carrier's {@code busy} flag, which a virtual thread
 * reads first, is only a hint (it is the carrier's plain field): the borrow decides.
 *
 * <p>Needs {@code jdk.internal.misc} and {@code jdk.internal.access} exported to this module (the
 * agent exports them); without, or on JDK 17, {@link #available()} is false and virtual threads use
 * the shared tier only.
 */
final class Carriers {
    private static final MethodHandle CURRENT_CARRIER; // () Thread
    private static final MethodHandle NEW_CARRIER_LOCAL; // () ThreadLocal

    static {
        MethodHandle current = null;
        MethodHandle local = null;
        try {
            final Class<?> secrets = Class.forName("jdk.internal.access.SharedSecrets");
            final Object jla = secrets.getMethod("getJavaLangAccess").invoke(null);
            final Class<?> jlaType = Class.forName("jdk.internal.access.JavaLangAccess");
            current = MethodHandles.lookup().findVirtual(jlaType, "currentCarrierThread",
                MethodType.methodType(Thread.class)).bindTo(jla);
            final Class<?> carrierLocal = Class.forName("jdk.internal.misc.CarrierThreadLocal");
            local = MethodHandles.lookup().findConstructor(carrierLocal, MethodType.methodType(void.class))
                .asType(MethodType.methodType(ThreadLocal.class));
            final Thread self = (Thread) current.invokeExact();
            final Thread me = Thread.currentThread();
            // the agent builds the allocator on the thread of the first allocation, which may be virtual: then
            // the answer is its carrier, a platform thread
            if (self == null || (self != me && !(boolean) Thread.class.getMethod("isVirtual").invoke(me))) {
                throw new IllegalStateException("currentCarrierThread() of a platform thread is not itself");
            }
        } catch (final Throwable unavailable) {
            current = null; // JDK 17 (no virtual threads), or the packages are not exported to this module
            local = null;
        }
        CURRENT_CARRIER = current;
        NEW_CARRIER_LOCAL = local;
    }

    private Carriers() {
    }

    static boolean available() {
        return CURRENT_CARRIER != null;
    }

    /** @return the thread the calling thread runs on (itself for a platform thread); {@code null} when unavailable. */
    static Thread current() {
        if (CURRENT_CARRIER == null) {
            return null;
        }
        try {
            return (Thread) CURRENT_CARRIER.invokeExact();
        } catch (final Throwable t) {
            return null;
        }
    }

    /** @return a new carrier thread-local, or {@code null} when unavailable. */
    @SuppressWarnings("unchecked")
    static <T> ThreadLocal<T> newLocal() {
        if (NEW_CARRIER_LOCAL == null) {
            return null;
        }
        try {
            return (ThreadLocal<T>) (ThreadLocal<?>) NEW_CARRIER_LOCAL.invokeExact();
        } catch (final Throwable t) {
            return null;
        }
    }
}
