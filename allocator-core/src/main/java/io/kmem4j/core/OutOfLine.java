package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The slow paths the hit paths call, kept out of the hit paths' compiled code: each is called
 * through a method handle read from a field that is not {@code final}, which the JIT compilers
 * cannot treat as a constant and therefore never inline through. Pure Java has no
 * "do not inline" ({@code @DontInline} is honoured for the JDK's own classes only).
 *
 * <p>Why: JDK 17's C2 inlines a call it has seen often enough whatever its callers, so the miss
 * path ({@link Refill#allocate}: locks, loops, zeroing, remote-free absorption, the slab tiers) was
 * compiled into every root of the allocation path (the application's caller,
 * {@code ByteBuffer.allocateDirect}, the bridge, {@code serve}), 3-6 KB of bytecode each, and
 * thrown away at each phase change of the allocator: in the short sample programs about two thirds
 * of the CPU the agent added was C2's (JDK 25 already leaves these calls cold). A miss costs one
 * indirect call more (a few ns, once per magazine of 8 to 32 objects).
 *
 * <p>Threads: the fields are written once, in this class's initialiser; a racy read sees that value.
 */
final class OutOfLine {
    /** {@code (Refill, ThreadCache, int) long}: {@link Refill#allocate}. Not final on purpose (class comment). */
    private static MethodHandle refill = find(Refill.class, "allocate",
        MethodType.methodType(long.class, ThreadCache.class, int.class));
    /** {@code (ThreadCache, int, long) void}: {@link ThreadCache#spill}. Not final on purpose. */
    private static MethodHandle spill = find(ThreadCache.class, "spill",
        MethodType.methodType(void.class, int.class, long.class));
    /** {@code (ThreadCache, int, long) void}: {@link ThreadCache#freeRemote}. Not final on purpose. */
    private static MethodHandle freeRemote = find(ThreadCache.class, "freeRemote",
        MethodType.methodType(void.class, int.class, long.class));

    private OutOfLine() {
    }

    /** {@link Refill#allocate}, out of line. */
    static long refill(final Refill r, final ThreadCache tc, final int cls) {
        try {
            return (long) refill.invokeExact(r, tc, cls);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@link ThreadCache#spill}, out of line. */
    static void spill(final ThreadCache tc, final int cls, final long address) {
        try {
            spill.invokeExact(tc, cls, address);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@link ThreadCache#freeRemote}, out of line. */
    static void freeRemote(final ThreadCache tc, final int owner, final long address) {
        try {
            freeRemote.invokeExact(tc, owner, address);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle find(final Class<?> owner, final String name, final MethodType type) {
        try {
            return MethodHandles.lookup().findVirtual(owner, name, type);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
