package io.kmem4j.core;

import java.io.FileDescriptor;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;

/**
 * The few {@code java.nio} internals the allocator needs, resolved once by shape and held in
 * {@code static final} method handles so calls inline like direct calls.
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
 *       explicit one and from a view.</li>
 *   <li>{@code java.nio.Bits.tryReserveMemory(long size, long cap)} / {@code unreserveMemory}: chunk
 *       memory is counted against {@code -XX:MaxDirectMemorySize} exactly as the JDK counts its own
 *       direct buffers (case C2); growth never waits (no GC, no back-off): when a chunk does not fit,
 *       the request goes to the JDK's own path, which reclaims and throws its own error.</li>
 * </ul>
 *
 * <p>Access needs {@code java.nio} opened to this class's module: the agent does that with
 * {@code Instrumentation.redefineModule}; code using the core library directly passes
 * {@code --add-opens java.base/java.nio=ALL-UNNAMED} (and
 * {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED} for Agrona's {@code UnsafeApi}).
 * When anything is missing (as expected on JDK 26, JDK-8344332) {@link #failure()} says what, and
 * {@link SlabAllocator}'s constructor refuses to start.
 */
final class JdkInternals {
    /** Test switch: behave as on a JDK whose internals do not match (JDK 26), to test the fallback. */
    static final String SIMULATE_UNSUPPORTED_JDK = "kmem4j.simulateUnsupportedJdk";
    private static final String UNSUPPORTED_PREFIX = "this JDK's java.nio internals do not match kmem4j's needs (";
    private static final MethodHandle NEW_BUFFER;      // (int cap, long addr, Runnable hook) ByteBuffer
    private static final MethodHandle CLEANER;         // (ByteBuffer) Object
    private static final MethodHandle ATTACHMENT;      // (ByteBuffer) Object
    private static final MethodHandle RESERVE;         // (long size, long cap) void
    private static final MethodHandle UNRESERVE;       // (long size, long cap) void
    private static final MethodHandle TRY_RESERVE;     // (long size, long cap) boolean
    private static final Class<?> DIRECT_BUFFER_CLASS;
    private static final String FAILURE;

    static {
        MethodHandle newBuffer = null, cleaner = null, attachment = null, reserve = null, unreserve = null;
        MethodHandle tryReserve = null;
        Class<?> dbb = null;
        String failure = null;
        try {
            if (Boolean.getBoolean(SIMULATE_UNSUPPORTED_JDK)) {
                throw new NoSuchMethodException("DirectByteBuffer's mapped-buffer constructor (missing on purpose: -D"
                    + SIMULATE_UNSUPPORTED_JDK + "=true)");
            }
            dbb = Class.forName("java.nio.DirectByteBuffer");
            final MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(dbb, MethodHandles.lookup());
            Constructor<?> mapped = null;
            for (final Constructor<?> c : dbb.getDeclaredConstructors()) {
                final Class<?>[] p = c.getParameterTypes();
                if (p.length == 6 && p[0] == int.class && p[1] == long.class && p[2] == FileDescriptor.class
                    && p[3] == Runnable.class && p[4] == boolean.class && !p[5].isPrimitive()) {
                    mapped = c;
                }
            }
            if (mapped == null) {
                throw new NoSuchMethodException(
                    "DirectByteBuffer(int, long, FileDescriptor, Runnable, boolean, <segment>) not found");
            }
            MethodHandle ctor = lookup.unreflectConstructor(mapped);
            ctor = MethodHandles.insertArguments(ctor, 4, false, null);           // isSync, segment
            ctor = MethodHandles.insertArguments(ctor, 2, (Object) null);          // fd
            newBuffer = ctor.asType(MethodType.methodType(ByteBuffer.class, int.class, long.class, Runnable.class));

            final Class<?> cleanerClass = Class.forName("jdk.internal.ref.Cleaner");
            cleaner = lookup.findVirtual(dbb, "cleaner", MethodType.methodType(cleanerClass))
                .asType(MethodType.methodType(Object.class, ByteBuffer.class));
            attachment = lookup.findVirtual(dbb, "attachment", MethodType.methodType(Object.class))
                .asType(MethodType.methodType(Object.class, ByteBuffer.class));

            final Class<?> bits = Class.forName("java.nio.Bits");
            final MethodHandles.Lookup bitsLookup = MethodHandles.privateLookupIn(bits, MethodHandles.lookup());
            final MethodType reserveType = MethodType.methodType(void.class, long.class, long.class);
            reserve = bitsLookup.findStatic(bits, "reserveMemory", reserveType);
            unreserve = bitsLookup.findStatic(bits, "unreserveMemory", reserveType);
            tryReserve = bitsLookup.findStatic(bits, "tryReserveMemory",
                MethodType.methodType(boolean.class, long.class, long.class));
        } catch (final Throwable t) {
            failure = UNSUPPORTED_PREFIX + t
                + "); java.nio must be open to kmem4j (--add-opens java.base/java.nio=ALL-UNNAMED when used"
                + " without the agent)";
        }
        NEW_BUFFER = newBuffer;
        CLEANER = cleaner;
        ATTACHMENT = attachment;
        RESERVE = reserve;
        UNRESERVE = unreserve;
        TRY_RESERVE = tryReserve;
        DIRECT_BUFFER_CLASS = dbb;
        FAILURE = failure;
    }

    private JdkInternals() {
    }

    /** @return why the internals are unusable, or {@code null} when everything resolved. */
    static String failure() {
        return FAILURE;
    }

    /**
     * Builds a root direct buffer over {@code [address, address + capacity)}: position 0, limit and
     * capacity {@code capacity}, {@code BIG_ENDIAN}, writable. A non-null {@code hook} becomes the
     * buffer's JDK cleaner thunk; {@code null} builds a buffer with no cleaner.
     */
    static ByteBuffer newDirectBuffer(final int capacity, final long address, final Runnable hook) {
        try {
            return (ByteBuffer) NEW_BUFFER.invokeExact(capacity, address, hook);
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
            return (Object) CLEANER.invokeExact(b);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return the buffer's attachment (non-null for views), {@code b} must be a {@code DirectByteBuffer}. */
    static Object attachment(final ByteBuffer b) {
        try {
            return (Object) ATTACHMENT.invokeExact(b);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Counts {@code bytes} against {@code MaxDirectMemorySize} as the JDK does for its own buffers,
     * including its GC-and-back-off loop.
     *
     * @throws OutOfMemoryError {@code "Cannot reserve N bytes of direct buffer memory (allocated: A, limit: L)"}
     */
    static void reserveDirectMemory(final long bytes) {
        try {
            RESERVE.invokeExact(bytes, bytes);
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
            return (boolean) TRY_RESERVE.invokeExact(bytes, bytes);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Returns {@code bytes} taken with {@link #reserveDirectMemory(long)} or {@link #tryReserveDirectMemory(long)}. */
    static void unreserveDirectMemory(final long bytes) {
        try {
            UNRESERVE.invokeExact(bytes, bytes);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Is {@code t} the thread on which the JDK runs direct buffers' cleaners after GC? On JDK 17 to 25
     * that is the "Reference Handler" thread of the system thread group (it runs
     * {@code jdk.internal.ref.Cleaner}s itself); from JDK 26 on, buffers register with
     * {@code java.nio.BufferCleaner}, whose own daemon thread ({@code BufferCleaner.cleaningThread},
     * JDK-8344332) runs them. A release on that thread must never block nor take a lock.
     */
    static boolean isGcCleanerThread(final Thread t) {
        if ("Reference Handler".equals(t.getName()) && t.getThreadGroup() != null
            && t.getThreadGroup().getParent() == null) {
            return true;
        }
        return BufferCleanerThread.HANDLE != null && t == BufferCleanerThread.get();
    }

    /** {@code java.nio.BufferCleaner.cleaningThread} (JDK 26+), resolved on first use. */
    private static final class BufferCleanerThread {
        static final java.lang.invoke.VarHandle HANDLE = resolve();

        private static java.lang.invoke.VarHandle resolve() {
            try {
                final Class<?> c = Class.forName("java.nio.BufferCleaner");
                return MethodHandles.privateLookupIn(c, MethodHandles.lookup())
                    .findStaticVarHandle(c, "cleaningThread", Thread.class);
            } catch (final ReflectiveOperationException | RuntimeException e) {
                return null; // JDK 17-25: no BufferCleaner
            }
        }

        static Thread get() {
            return (Thread) HANDLE.getVolatile();
        }
    }
}
