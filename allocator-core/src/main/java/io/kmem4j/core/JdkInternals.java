package io.kmem4j.core;

import java.io.FileDescriptor;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.Reference;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;

/**
 * The few {@code java.nio} internals the allocator needs, resolved once by shape and held in
 * {@code static final} method handles so calls inline like direct calls. Checked on JDK 17.0.15,
 * 21.0.13, 25.0.3, 26.0.2.1 and 27.0.1.
 *
 * <ul>
 *   <li>{@code DirectByteBuffer(int cap, long addr, FileDescriptor fd, Runnable unmapper,
 *       boolean isSync, <segment>)}: the mapped-file constructor. With {@code fd == null} and our
 *       {@link Runnable} as {@code unmapper} it builds a <em>root</em> buffer with no attachment and a
 *       real JDK cleaner that runs the runnable exactly once (explicit clean or GC). With a
 *       {@code null} unmapper it builds a root buffer with no cleaner at all. The last parameter's
 *       type differs between JDK 17 ({@code MemorySegmentProxy}) and 21+ ({@code MemorySegment}),
 *       so the constructor is found by its first five parameter types.</li>
 *   <li>{@code DirectByteBuffer.cleaner()} and {@code attachment()}: to tell a tracked root from an
 *       explicit one and from a view. {@code cleaner()}'s return type is taken from the method
 *       itself: {@code jdk.internal.ref.Cleaner} on 17-25, the interface {@code sun.nio.Cleaner} on
 *       26+ (JDK-8344332 removed {@code jdk.internal.ref.Cleaner}).</li>
 *   <li>The thread that runs the cleaners of buffers found unreachable by GC
 *       ({@link #isGcCleanerThread(Thread)}): on 17-25 the "Reference Handler" thread (it runs
 *       {@code jdk.internal.ref.Cleaner}s itself); on 26+ the one thread of
 *       {@code java.nio.BufferCleaner} (static field {@code cleaningThread}, started with the first
 *       cleaner, named "InnocuousThread-N"). Its frees must never block (they are deferred).</li>
 *   <li>{@code java.nio.Bits.tryReserveMemory(long size, long cap)} / {@code unreserveMemory}: chunk
 *       memory is counted against {@code -XX:MaxDirectMemorySize} exactly as the JDK counts its own
 *       direct buffers (case C2); growth never waits (no GC, no back-off): when a chunk does not fit,
 *       the request goes to the JDK's own path, which reclaims and throws its own error. (On 26+ that
 *       path, {@code Bits.reserveMemory}, may run pending buffer cleaners, kmem4j's included, on the
 *       allocating thread.)</li>
 * </ul>
 *
 * <p>Access needs {@code java.nio} opened to this class's module: the agent does that with
 * {@code Instrumentation.redefineModule}; code using the core library directly passes
 * {@code --add-opens java.base/java.nio=ALL-UNNAMED} (and
 * {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED} for Agrona's {@code UnsafeApi}).
 * When anything is missing or of another shape, {@link #failure()} names the JDK and what did not
 * match, and {@link SlabAllocator}'s constructor refuses to start.
 */
final class JdkInternals {
    /**
     * Test switch: behave as on a JDK whose internals do not match (the mapped-buffer constructor
     * "missing"), to test the fallback on any JDK.
     */
    static final String SIMULATE_UNSUPPORTED_JDK = "kmem4j.simulateUnsupportedJdk";
    /** DirectByteBuffer(int cap, long addr, FileDescriptor fd, Runnable unmapper, boolean isSync, segment). */
    private static final Constructor<?> MAPPED;
    private static final Method CLEANER_METHOD;       // DirectByteBuffer.cleaner()
    private static final Method ATTACHMENT_METHOD;    // DirectByteBuffer.attachment()
    private static final Method UNRESERVE_METHOD;     // Bits.unreserveMemory(long size, long cap)
    private static final Method TRY_RESERVE_METHOD;   // Bits.tryReserveMemory(long size, long cap)
    /** {@code java.nio.BufferCleaner.cleaningThread} on 26+; null where the Reference Handler cleans. */
    private static final Field CLEANING_THREAD_FIELD;
    private static final Class<?> DIRECT_BUFFER_CLASS;
    private static final String FAILURE;

    /*
     * The probe: every member found by reflection and java.nio's access checked (privateLookupIn), no
     * method handle made. The agent runs it at start-up; the handles, whose LambdaForms a JVM spins at
     * its first use of them (some 10 ms), are made when an allocator is built (Handles).
     */
    static {
        Constructor<?> mapped = null;
        Method cleaner = null, attachment = null, unreserve = null, tryReserve = null;
        Field cleaningThread = null;
        Class<?> dbb = null;
        String failure = null;
        String what = "java.nio.DirectByteBuffer";
        try {
            dbb = Class.forName("java.nio.DirectByteBuffer");
            MethodHandles.privateLookupIn(dbb, MethodHandles.lookup()); // IllegalAccessException: java.nio not open

            what = "DirectByteBuffer's mapped-buffer constructor"
                + " (int, long, FileDescriptor, Runnable, boolean, <segment>)";
            if (Boolean.getBoolean(SIMULATE_UNSUPPORTED_JDK)) {
                throw new NoSuchMethodException("missing on purpose: -D" + SIMULATE_UNSUPPORTED_JDK + "=true");
            }
            for (final Constructor<?> c : dbb.getDeclaredConstructors()) {
                final Class<?>[] p = c.getParameterTypes();
                if (p.length == 6 && p[0] == int.class && p[1] == long.class && p[2] == FileDescriptor.class
                    && p[3] == Runnable.class && p[4] == boolean.class && !p[5].isPrimitive()) {
                    mapped = c;
                }
            }
            if (mapped == null) {
                throw new NoSuchMethodException("not found");
            }

            what = "DirectByteBuffer.cleaner()";
            cleaner = dbb.getDeclaredMethod("cleaner");
            what = "DirectByteBuffer.attachment()";
            attachment = dbb.getDeclaredMethod("attachment");
            if (attachment.getReturnType() != Object.class) {
                throw new NoSuchMethodException("returns " + attachment.getReturnType().getName());
            }

            if (!Reference.class.isAssignableFrom(cleaner.getReturnType())) {
                // 26+: not a Reference the Reference Handler runs, so a cleaning thread of its own
                what = "the thread that runs buffer cleaners after GC (java.nio.BufferCleaner.cleaningThread, as"
                    + " cleaner() returns " + cleaner.getReturnType().getName() + ")";
                final Class<?> bufferCleaner = Class.forName("java.nio.BufferCleaner");
                cleaningThread = bufferCleaner.getDeclaredField("cleaningThread");
                if (cleaningThread.getType() != Thread.class || !Modifier.isStatic(cleaningThread.getModifiers())) {
                    throw new NoSuchFieldException("of another shape: " + cleaningThread);
                }
            }

            what = "java.nio.Bits.unreserveMemory/tryReserveMemory(long, long)";
            final Class<?> bits = Class.forName("java.nio.Bits");
            unreserve = staticMethod(bits, "unreserveMemory", void.class);
            tryReserve = staticMethod(bits, "tryReserveMemory", boolean.class);
            // tryReserveMemory by reflection (a handle of its own shape spins two LambdaForms); a failure of the
            // reflective call itself reserves nothing. unreserveMemory through a handle (Handles.UNRESERVE): a
            // handle with primitive arguments allocates nothing, so the memory given back is always counted back
            tryReserve.setAccessible(true);
        } catch (final IllegalAccessException e) {
            // privateLookupIn when java.nio is not open to this module
            failure = "java.nio is not open to kmem4j on " + UnsupportedJdkException.runningJdk() + " (" + what
                + ": " + e + "); pass --add-opens java.base/java.nio=ALL-UNNAMED when using the allocator"
                + " without the agent";
        } catch (final Throwable t) {
            failure = "the java.nio internals of " + UnsupportedJdkException.runningJdk()
                + " do not match kmem4j's needs: " + what + ": " + t;
        }
        MAPPED = mapped;
        CLEANER_METHOD = cleaner;
        ATTACHMENT_METHOD = attachment;
        UNRESERVE_METHOD = unreserve;
        TRY_RESERVE_METHOD = tryReserve;
        CLEANING_THREAD_FIELD = cleaningThread;
        DIRECT_BUFFER_CLASS = dbb;
        FAILURE = failure;
    }

    private static Method staticMethod(final Class<?> c, final String name, final Class<?> returns)
        throws NoSuchMethodException {
        final Method m = c.getDeclaredMethod(name, long.class, long.class);
        if (!Modifier.isStatic(m.getModifiers()) || m.getReturnType() != returns) {
            throw new NoSuchMethodException("of another shape: " + m);
        }
        return m;
    }

    /**
     * The method handles over the probed members, in {@code static final} fields so calls inline like
     * direct calls; made at the first use (an allocator's construction asks for {@link #handlesFailure()}).
     */
    private static final class Handles {
        /** (int cap, long addr, FileDescriptor null, Runnable hook, boolean false, Object null) ByteBuffer. */
        static final MethodHandle NEW_BUFFER;
        static final MethodHandle CLEANER;         // (ByteBuffer) Object
        static final MethodHandle ATTACHMENT;      // (ByteBuffer) Object
        static final MethodHandle UNRESERVE;       // (long size, long cap) void
        static final MethodHandle CLEANING_THREAD; // () Thread, or null
        static final String FAILURE;

        static {
            MethodHandle newBuffer = null, cleaner = null, attachment = null, unreserve = null, cleaningThread = null;
            String failure = JdkInternals.FAILURE;
            if (failure == null) {
                try {
                    final MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(DIRECT_BUFFER_CLASS,
                        MethodHandles.lookup());
                    // the constant arguments are passed at the call, not bound here: insertArguments spins a bound
                    // method handle species and its LambdaForms per shape (three of them)
                    newBuffer = lookup.unreflectConstructor(MAPPED).asType(MethodType.methodType(ByteBuffer.class,
                        int.class, long.class, FileDescriptor.class, Runnable.class, boolean.class, Object.class));
                    cleaner = lookup.unreflect(CLEANER_METHOD).asType(MethodType.methodType(Object.class, ByteBuffer.class));
                    attachment = lookup.unreflect(ATTACHMENT_METHOD)
                        .asType(MethodType.methodType(Object.class, ByteBuffer.class));
                    if (CLEANING_THREAD_FIELD != null) {
                        cleaningThread = MethodHandles.privateLookupIn(CLEANING_THREAD_FIELD.getDeclaringClass(),
                            MethodHandles.lookup()).unreflectGetter(CLEANING_THREAD_FIELD);
                    }
                    unreserve = MethodHandles.privateLookupIn(UNRESERVE_METHOD.getDeclaringClass(), MethodHandles.lookup())
                        .unreflect(UNRESERVE_METHOD);
                } catch (final Throwable t) {
                    failure = "the java.nio internals of " + UnsupportedJdkException.runningJdk()
                        + " do not match kmem4j's needs: method handles: " + t;
                }
            }
            NEW_BUFFER = newBuffer;
            CLEANER = cleaner;
            ATTACHMENT = attachment;
            UNRESERVE = unreserve;
            CLEANING_THREAD = cleaningThread;
            FAILURE = failure;
        }
    }

    private JdkInternals() {
    }

    /** @return why the internals are unusable, or {@code null} when everything resolved (the probe: no method handle made). */
    static String failure() {
        return FAILURE;
    }

    /** @return as {@link #failure()}, after making the method handles (an allocator's construction). */
    static String handlesFailure() {
        return Handles.FAILURE;
    }

    /**
     * Whether {@code t} is the JDK thread that runs the cleaners of direct buffers found unreachable
     * by GC (not one that cleans explicitly): the "Reference Handler" on 17-25, the
     * {@code java.nio.BufferCleaner} thread on 26+. Asked once per thread, on its first release.
     *
     * @param t a thread
     * @return true for that thread; its frees must never block
     */
    static boolean isGcCleanerThread(final Thread t) {
        if (CLEANING_THREAD_FIELD == null) {
            return "Reference Handler".equals(t.getName()) && t.getThreadGroup() != null
                && t.getThreadGroup().getParent() == null;
        }
        try {
            // A plain read of a field written once before the cleaning thread starts: that thread
            // sees itself (Thread.start happens-before its run); any other thread sees null or the
            // cleaning thread, never itself. So the answer is exact without ordering.
            return t == (Thread) Handles.CLEANING_THREAD.invokeExact();
        } catch (final Throwable e) {
            return false;
        }
    }

    /**
     * Builds a root direct buffer over {@code [address, address + capacity)}: position 0, limit and
     * capacity {@code capacity}, {@code BIG_ENDIAN}, writable. A non-null {@code hook} becomes the
     * buffer's JDK cleaner thunk; {@code null} builds a buffer with no cleaner.
     */
    static ByteBuffer newDirectBuffer(final int capacity, final long address, final Runnable hook) {
        try {
            return (ByteBuffer) Handles.NEW_BUFFER.invokeExact(capacity, address, (FileDescriptor) null, hook, false, (Object) null);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return true when {@code b} is a JDK direct buffer (not a view built by a foreign class). */
    static boolean isDirectByteBuffer(final ByteBuffer b) {
        return DIRECT_BUFFER_CLASS.isInstance(b);
    }

    /** @return the buffer's JDK cleaner, or {@code null}; {@code b} must be a {@code DirectByteBuffer}. */
    static Object cleaner(final ByteBuffer b) {
        try {
            return (Object) Handles.CLEANER.invokeExact(b);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return the buffer's attachment (non-null for views), {@code b} must be a {@code DirectByteBuffer}. */
    static Object attachment(final ByteBuffer b) {
        try {
            return (Object) Handles.ATTACHMENT.invokeExact(b);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Counts {@code bytes} against {@code MaxDirectMemorySize} only if they fit now: no GC, no
     * waiting (the JDK's {@code Bits.tryReserveMemory}). The allocator grows this way, so a full
     * budget never makes an allocation wait; the request goes to the JDK's own path instead, which
     * reclaims with GC as it always does.
     *
     * @return true when reserved
     */
    static boolean tryReserveDirectMemory(final long bytes) {
        try {
            return (boolean) TRY_RESERVE_METHOD.invoke(null, bytes, bytes);
        } catch (final java.lang.reflect.InvocationTargetException e) {
            final Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @return true when {@code bytes} would fit under {@code MaxDirectMemorySize} now: a
     *         {@link #tryReserveDirectMemory(long)} given back at once (one CAS each way, no GC, no wait)
     */
    static boolean fitsUnderTheLimit(final long bytes) {
        if (tryReserveDirectMemory(bytes)) {
            unreserveDirectMemory(bytes);
            return true;
        }
        return false;
    }

    /** Returns {@code bytes} taken with {@link #tryReserveDirectMemory(long)}. */
    static void unreserveDirectMemory(final long bytes) {
        try {
            Handles.UNRESERVE.invokeExact(bytes, bytes);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
