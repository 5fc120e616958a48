package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;

import org.agrona.UnsafeApi;

/**
 * JDK cleaners that are not in the JDK's cleaner list: the objects {@code cleaner()} returns for
 * kmem4j's tracked buffers once the owned lifecycle is on ({@link OwnedLifecycle}).
 *
 * <p>Every direct buffer with a JDK cleaner joins one JDK-wide list at birth and leaves it at
 * release, under one monitor: {@code jdk.internal.ref.Cleaner.add/remove} ({@code private static
 * synchronized}, JDK 17-25) or {@code java.nio.BufferCleaner}'s {@code CleanerList.insert/remove}
 * ({@code synchronized} on one static list, JDK 26+, JDK-8344332). The list only keeps the cleaners
 * strongly reachable until they run. kmem4j keeps its own cleaners reachable itself (one slot per
 * object in the slab, {@link Slab#cleaners}), so it builds them without the list:
 * <pre>
 *   17-25  new jdk.internal.ref.Cleaner(buffer, release)        private constructor, no add();
 *          prev = MARK                                           (a Cleaner of kmem4j's, never in the list)
 *   26+    new java.nio.BufferCleaner.PhantomCleaner(buffer, release)   no insert();
 *          node = MARK                                           (a CleanerList.Node of kmem4j's, never in the list)
 *   both   buffer.cleaner = that cleaner                         (the buffer is built with no cleaner first)
 * </pre>
 * Such a cleaner is the JDK's own type, so {@code cleaner()}, {@code Unsafe.invokeCleaner},
 * {@code cleaner().clean()} and GC treat it as any other; the agent rewrites the JDK cleaner's
 * {@code clean()} (method body only) so that a cleaner carrying the mark runs its thunk without the
 * list and passes itself to its thunk: {@code if (prev == MARK) { thunk.accept(this); return; }}
 * (17-25), {@code if (node == MARK) { clear(); action.accept(this); return; }} (26+), for a thunk
 * that is a {@code Consumer} ({@code run()} for one that is not). The thunk ({@link SlotRelease},
 * one per slab slot) is exactly-once by itself: the cleaner it is given must be the slot's.
 * On 17-25 an unrewritten {@code clean()} still works on such a cleaner (its {@code remove()} finds
 * it in no list and lets it run once, under the JDK's monitor); on 26+ it would not, which is why
 * the owned lifecycle is only ever switched on after the rewrite is in place.
 *
 * <p>Needs {@code java.nio} opened (both) and {@code jdk.internal.ref} opened (17-25) to this module.
 * Threads: any; {@link #build} runs on the allocating thread before the buffer is published.
 */
final class JdkCleaners {
    private static final String FAILURE;
    /** 17-25: (Object referent, Runnable thunk) Cleaner; 26+: (Object, Runnable) PhantomCleaner. */
    private static final MethodHandle NEW_CLEANER;
    /** The field carrying the mark: {@code Cleaner.prev} or {@code PhantomCleaner.node}. */
    private static final VarHandle MARK_FIELD;
    /** This copy's own mark: a cleaner (17-25) or a cleaner-list node (26+), never in the JDK's list. */
    private static final Object MARK;
    /** The mark cleaners are built with: {@link #MARK}, or another copy's ({@link #useMark}). */
    private static volatile Object mark;
    /** Offset of {@code DirectByteBuffer.cleaner} (final: set once, before the buffer is published). */
    private static final long BUFFER_CLEANER_OFFSET;
    /** The JDK cleaner's {@code clean()}, (Object cleaner) void. */
    private static final MethodHandle CLEAN;
    /** 17-25: {@code Cleaner.next}, which the JDK's {@code remove()} sets when the list was used; {@code null} on 26+. */
    private static final VarHandle NEXT_FIELD;
    /** 26+: {@code CleanerList.Node.size} of the mark, which the JDK's {@code remove()} would change; {@code null} on 17-25. */
    private static final VarHandle NODE_SIZE;
    /** 26+: {@code BufferCleaner.startCleaningThreadIfNeeded()}; {@code null} on 17-25. */
    private static final MethodHandle START_CLEANING_THREAD;
    /** True on 17-25 (jdk.internal.ref.Cleaner), false on 26+ (java.nio.BufferCleaner). */
    static final boolean REFERENCE_HANDLER_CLEANS;

    static {
        MethodHandle newCleaner = null;
        MethodHandle start = null;
        MethodHandle clean = null;
        VarHandle markField = null;
        VarHandle next = null;
        VarHandle nodeSize = null;
        Object mark = null;
        long offset = -1;
        boolean referenceHandler = false;
        String failure = null;
        try {
            final Class<?> dbb = Class.forName("java.nio.DirectByteBuffer");
            final Field cleanerField = dbb.getDeclaredField("cleaner");
            offset = UnsafeApi.objectFieldOffset(cleanerField);
            final Class<?> type = cleanerField.getType();
            final MethodType ctorType = MethodType.methodType(void.class, Object.class, Runnable.class);
            if ("jdk.internal.ref.Cleaner".equals(type.getName())) {
                referenceHandler = true;
                final MethodHandles.Lookup l = MethodHandles.privateLookupIn(type, MethodHandles.lookup());
                newCleaner = l.findConstructor(type, ctorType);
                markField = l.findVarHandle(type, "prev", type);
                next = l.findVarHandle(type, "next", type);
                clean = l.findVirtual(type, "clean", MethodType.methodType(void.class));
                // through the handle the hot path uses (asType below): a generic invoke spins LambdaForms of its own
                newCleaner = newCleaner.asType(MethodType.methodType(Object.class, Object.class, Runnable.class));
                mark = (Object) newCleaner.invokeExact(new Object(), (Runnable) new Nothing());
            } else {
                final Class<?> cleaner = Class.forName("java.nio.BufferCleaner$PhantomCleaner");
                final Class<?> node = Class.forName("java.nio.BufferCleaner$CleanerList$Node");
                final Class<?> bufferCleaner = Class.forName("java.nio.BufferCleaner");
                final MethodHandles.Lookup l = MethodHandles.privateLookupIn(cleaner, MethodHandles.lookup());
                newCleaner = l.findConstructor(cleaner, ctorType);
                markField = l.findVarHandle(cleaner, "node", node);
                clean = l.findVirtual(cleaner, "clean", MethodType.methodType(void.class));
                final MethodHandles.Lookup nl = MethodHandles.privateLookupIn(node, MethodHandles.lookup());
                nodeSize = nl.findVarHandle(node, "size", int.class);
                final java.lang.reflect.Constructor<?> nodeConstructor = node.getDeclaredConstructor();
                nodeConstructor.setAccessible(true); // java.nio is open to kmem4j; made once, no handle kept
                mark = nodeConstructor.newInstance();
                start = MethodHandles.privateLookupIn(bufferCleaner, MethodHandles.lookup())
                    .findStatic(bufferCleaner, "startCleaningThreadIfNeeded", MethodType.methodType(void.class));
                if (!type.isAssignableFrom(cleaner)) {
                    throw new NoSuchFieldException("DirectByteBuffer.cleaner is a " + type.getName()
                        + ", not a supertype of " + cleaner.getName());
                }
            }
            newCleaner = newCleaner.asType(MethodType.methodType(Object.class, Object.class, Runnable.class));
            clean = clean.asType(MethodType.methodType(void.class, Object.class));
        } catch (final Throwable t) {
            failure = "JDK cleaners outside the JDK's list are not available on " + UnsupportedJdkException.runningJdk()
                + ": " + t;
        }
        FAILURE = failure;
        NEW_CLEANER = newCleaner;
        MARK_FIELD = markField;
        MARK = mark;
        JdkCleaners.mark = mark;
        BUFFER_CLEANER_OFFSET = offset;
        START_CLEANING_THREAD = start;
        CLEAN = clean;
        NEXT_FIELD = next;
        NODE_SIZE = nodeSize;
        REFERENCE_HANDLER_CLEANS = referenceHandler;
    }

    private JdkCleaners() {
    }

    // Named classes rather than lambdas here and on the agent's start-up path: each lambda spins a class
    // and LambdaForms (ASM, in the interpreter) at first use, which every JVM started with the agent paid.

    /** The mark's thunk. */
    private static final class Nothing implements Runnable, java.util.function.Consumer<Object> {
        @Override
        public void run() {
        }

        @Override
        public void accept(final Object cleaner) {
        }
    }

    /** The self-test's thunk: counts the runs it was given its own cleaner for. */
    private static final class Counting implements Runnable, java.util.function.Consumer<Object> {
        Object cleaner;
        int runs;

        @Override
        public void run() {
            // the rewritten clean() passes the cleaner (accept): a run() is not counted
        }

        @Override
        public void accept(final Object c) {
            if (c == cleaner) {
                runs++;
            }
        }
    }

    /** @return why unregistered cleaners cannot be built here, or {@code null} when they can. */
    static String failure() {
        return FAILURE;
    }

    /** @return this copy's mark (see the class comment), or {@code null} when {@link #failure()} is not. */
    static Object mark() {
        return MARK;
    }

    /**
     * Builds cleaners with {@code other} instead of this copy's mark: the mark another copy of kmem4j
     * (another class loader) rewrote the JDK's {@code clean()} for.
     *
     * @throws IllegalArgumentException when {@code other} is not a mark of this JDK's kind
     */
    static void useMark(final Object other) {
        if (MARK == null || other == null || other.getClass() != MARK.getClass()) {
            throw new IllegalArgumentException("not a cleaner mark of this JDK: " + other);
        }
        mark = other;
    }

    /** 26+: makes sure the thread that runs cleaners after GC exists (the JDK starts it only in its own register()). */
    static void startCleaningThread() {
        if (START_CLEANING_THREAD != null) {
            try {
                START_CLEANING_THREAD.invokeExact();
            } catch (final Throwable t) {
                throw new IllegalStateException("cannot start java.nio.BufferCleaner's thread", t);
            }
        }
    }

    /**
     * Gives {@code buffer} (built with no cleaner) an unregistered, marked cleaner running {@code thunk}.
     *
     * @return the cleaner, which the caller must keep strongly reachable until it ran
     */
    static Object build(final ByteBuffer buffer, final Runnable thunk) {
        final Object cleaner = newMarked(buffer, thunk);
        UnsafeApi.putReference(buffer, BUFFER_CLEANER_OFFSET, cleaner);
        return cleaner;
    }

    /** @return an unregistered cleaner of {@code referent} running {@code thunk}, carrying the mark. */
    private static Object newMarked(final Object referent, final Runnable thunk) {
        final Object cleaner;
        try {
            cleaner = (Object) NEW_CLEANER.invokeExact(referent, thunk);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        MARK_FIELD.set(cleaner, mark);
        return cleaner;
    }

    /**
     * Checks that the JDK cleaner's {@code clean()} was rewritten: a marked cleaner of a throw-away
     * referent is cleaned twice; its thunk must be passed that cleaner each time and the JDK's list code must not have run
     * (17-25: {@code next} untouched; 26+: the mark's node unchanged, the reference cleared). On 26+
     * an unrewritten {@code clean()} would treat the mark as a list node, so call this only after a
     * retransformation that reported success.
     *
     * @return true when the rewrite is in place
     */
    static boolean cleanRunsWithoutTheList() {
        if (FAILURE != null) {
            return false;
        }
        final Counting runs = new Counting();
        final Object referent = new Object();
        final Object cleaner = newMarked(referent, runs);
        runs.cleaner = cleaner;
        try {
            CLEAN.invokeExact(cleaner);
            if (REFERENCE_HANDLER_CLEANS && NEXT_FIELD.get(cleaner) != null) {
                return false; // the JDK's remove() ran: no rewrite (the thunk did run once, correctly)
            }
            CLEAN.invokeExact(cleaner); // the rewritten clean() runs the thunk again: it is the thunk's job to run once
        } catch (final Throwable t) {
            return false;
        }
        java.lang.ref.Reference.reachabilityFence(referent);
        final boolean listUntouched = REFERENCE_HANDLER_CLEANS ? NEXT_FIELD.get(cleaner) == null
            : (int) NODE_SIZE.get(MARK) == 0 && ((java.lang.ref.Reference<?>) cleaner).refersTo(null);
        return listUntouched && runs.runs == 2;
    }

    /**
     * @return true when the JDK's own list code marked {@code cleaner} removed (17-25: its {@code next}
     *         is itself, as {@code Cleaner.remove()} leaves it right before it runs the thunk); false on
     *         26+, and for {@code null}
     */
    static boolean removedByTheJdk(final Object cleaner) {
        return REFERENCE_HANDLER_CLEANS && cleaner != null && NEXT_FIELD.get(cleaner) == cleaner;
    }

    /** @return true when {@code cleaner} is one {@link #build} made. */
    static boolean isMarked(final Object cleaner) {
        return MARK != null && cleaner != null && MARK_FIELD.get(cleaner) == mark;
    }
}
