package io.kmem4j.core;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;

/**
 * The slow paths the hit paths call, kept out of the hit paths' compiled code, and the slow path cut
 * into pieces that are compiled one by one: each is called through a method handle read from a field
 * that is not {@code final}, which the JIT compilers cannot treat as a constant and therefore never
 * inline through. Pure Java has no "do not inline" ({@code @DontInline} is honoured for the JDK's own
 * classes only).
 *
 * <p>Why the hit paths: JDK 17's C2 inlines a call it has seen often enough whatever its callers, so
 * the miss path ({@link Refill#allocate}: locks, loops, zeroing, remote-free absorption, the slab
 * tiers) was compiled into every root of the allocation path (the application's caller,
 * {@code ByteBuffer.allocateDirect}, the bridge, {@code serve}), 3-6 KB of bytecode each, and thrown
 * away at each phase change of the allocator (JDK 25 already leaves these calls cold). A miss costs
 * one indirect call more (a few ns, once per magazine of 8 to 32 objects).
 *
 * <p>Why the pieces: compiled whole, the miss path was still one C2 compilation of 5.1 KB of
 * bytecode with its callees inlined (40 KB of machine code, 0.23 s of C2's time on JDK 17) and the
 * free path's {@link SlabCache#returnObjectLocked} another of 3.8 KB (0.13 s): C2's time grows faster
 * than the code it compiles, and the slab fill, the magazine spill and the locks were each compiled
 * into several of them. In a program of a few seconds on two cores that compile time was most of
 * the CPU the agent added. The tiers behind the lock ({@link Refill#fromSlabs}), taking in remote
 * frees ({@link RemoteFrees#absorb}), the slab fills ({@link Slab#fill}, and the shared slabs'
 * {@link SlabCache#fillSharedLocked} with its sorted partial list), the spill of a full magazine
 * ({@link ThreadCache#spill}), a free sent to its owner ({@link ThreadCache#freeRemote}) and the
 * partial and empty lists ({@link SlabCache#relistLocked}) are called through here from every caller,
 * so each is compiled once, on its own, and only when it is itself hot. Each runs once per magazine
 * or less often (a slab that changes lists, an object of another thread's slab met while a magazine
 * is flushed), so the indirect calls cost well under 1 ns per allocation. The exceptions are on the
 * free path: {@link ThreadCache#freeRemote} ({@code SlabAllocator.releaseTo}), once per free of
 * another thread's object, where it was out of line already, to keep the free hit path small; and
 * {@link SlabAllocator#defer}, once per free made by a thread without magazines of its own (the JDK's
 * cleaner thread, for every buffer dropped to GC; a virtual thread its carrier does not serve) or by a
 * thread inside its own slow path, which otherwise was compiled into every root of the release path
 * of the threads that do have them.
 *
 * <p>Why the tracked flavour's whole allocate and release paths ({@link SlabAllocator#serve} from
 * {@link SlabAllocator#tryAllocate}, {@link SlabAllocator#release} from the release hooks
 * {@link Release} and {@link SlotRelease}): the agent's rewrite makes every
 * {@code ByteBuffer.allocateDirect} of the application, and every {@code invokeCleaner} or
 * {@code cleaner().clean()}, a call of these, and C2 inlined the hit path into each application method
 * that allocates or frees (kvstore, JDK 17: {@code KvStore.newValue} 4.8 KB of machine code without the
 * agent, 11.3 KB with it; {@code ConcurrentHashMap.compute} 9.5 against 22.7 KB) and compiled it again
 * as roots of its own. In programs of a few seconds that compile time was most of the CPU the agent
 * added, and it was taken from the application on two cores. Out of line, the hit paths are compiled
 * once. Measured on kvstore, seven interleaved rounds, JDK 17: C2 time 1.61 s with the hit paths
 * inlined, 1.37 s out of line, 0.81 s without the agent; JMH {@code RingBenchmark.ring1} 256 B under the
 * agent, four forks each: 166-198 ns/op inlined, 154-182 out of line (no cost measurable). The explicit
 * flavour ({@link SlabAllocator#tryAllocateExplicit}, {@link SlabAllocator#free}) stays inline: its
 * callers are a buffer pool's few methods, not the application's.
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

    /** {@code (SlabAllocator, ThreadCache, int, long, int, int) void}: {@link SlabAllocator#defer}. Not final on purpose. */
    private static MethodHandle defer = find(SlabAllocator.class, "defer",
        MethodType.methodType(void.class, ThreadCache.class, int.class, long.class, int.class, int.class));

    /** {@code (Refill, ThreadCache, int, boolean) long}: {@link Refill#fromSlabs}. Not final on purpose. */
    private static MethodHandle fromSlabs = find(Refill.class, "fromSlabs",
        MethodType.methodType(long.class, ThreadCache.class, int.class, boolean.class));
    /** {@code (RemoteFrees, ThreadCache, long) void}: {@link RemoteFrees#absorb}. Not final on purpose. */
    private static MethodHandle absorb = find(RemoteFrees.class, "absorb",
        MethodType.methodType(void.class, ThreadCache.class, long.class));
    /** {@code (Slab, Magazine, int) int}: {@link Slab#fill}. Not final on purpose. */
    private static MethodHandle fill = find(Slab.class, "fill",
        MethodType.methodType(int.class, Magazine.class, int.class));
    /** {@code (SlabCache, Magazine, int) int}: {@link SlabCache#fillSharedLocked}. Not final on purpose. */
    private static MethodHandle fillShared = find(SlabCache.class, "fillSharedLocked",
        MethodType.methodType(int.class, Magazine.class, int.class));
    /** {@code (SlabCache, Slab) void}: {@link SlabCache#relistLocked}. Not final on purpose. */
    private static MethodHandle relist = find(SlabCache.class, "relistLocked",
        MethodType.methodType(void.class, Slab.class));

    /** {@code (SlabAllocator, int, boolean) ByteBuffer}: {@link SlabAllocator#serve}. Not final on purpose. */
    private static MethodHandle serve = find(SlabAllocator.class, "serve",
        MethodType.methodType(ByteBuffer.class, int.class, boolean.class));

    /** {@code (SlabAllocator, long, int, Chunk) void}: {@link SlabAllocator#release}. Not final on purpose. */
    private static MethodHandle release = find(SlabAllocator.class, "release",
        MethodType.methodType(void.class, long.class, int.class, Chunk.class));

    private OutOfLine() {
    }

    /**
     * {@link SlabAllocator#release}, out of line. Never throws (it runs inside JDK cleaners): a failure
     * of the call itself is counted as {@link SlabAllocator#release} counts its own.
     */
    static void release(final SlabAllocator a, final long address, final int capacity, final Chunk known) {
        try {
            release.invokeExact(a, address, capacity, known);
        } catch (final Throwable t) {
            try {
                a.hookFailed();
            } catch (final Throwable ignored) {
                // counting may fail too (heap exhausted, stack overflow): a cleaner must never throw
            }
        }
    }

    /** {@link SlabAllocator#serve}, out of line. */
    static ByteBuffer serve(final SlabAllocator a, final int capacity, final boolean tracked) {
        try {
            return (ByteBuffer) serve.invokeExact(a, capacity, tracked);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link Refill#allocate}, out of line. */
    static long refill(final Refill r, final ThreadCache tc, final int cls) {
        try {
            return (long) refill.invokeExact(r, tc, cls);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link ThreadCache#spill}, out of line. */
    static void spill(final ThreadCache tc, final int cls, final long address) {
        try {
            spill.invokeExact(tc, cls, address);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link ThreadCache#freeRemote}, out of line. */
    static void freeRemote(final ThreadCache tc, final int owner, final long address) {
        try {
            freeRemote.invokeExact(tc, owner, address);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link SlabAllocator#defer}, out of line. */
    static void defer(final SlabAllocator a, final ThreadCache tc, final int cls, final long address, final int capacity,
                      final int owner) {
        try {
            defer.invokeExact(a, tc, cls, address, capacity, owner);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * {@link Refill#fromSlabs}, out of line.
     *
     * @throws OutOfMemoryError and {@link SlabCache.RetiredException} as {@link Refill#fromSlabs} does
     */
    static long fromSlabs(final Refill r, final ThreadCache tc, final int cls, final boolean mayGrow) {
        try {
            return (long) fromSlabs.invokeExact(r, tc, cls, mayGrow);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link RemoteFrees#absorb}, out of line. */
    static void absorb(final RemoteFrees remote, final ThreadCache tc, final long chain) {
        try {
            absorb.invokeExact(remote, tc, chain);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link Slab#fill}, out of line. */
    static int fill(final Slab s, final Magazine m, final int max) {
        try {
            return (int) fill.invokeExact(s, m, max);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * {@link SlabCache#fillSharedLocked}, out of line (the caller holds the cache's lock).
     *
     * @throws SlabCache.RetiredException as {@link SlabCache#fillSharedLocked} does
     */
    static int fillSharedLocked(final SlabCache c, final Magazine m, final int max) {
        try {
            return (int) fillShared.invokeExact(c, m, max);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@link SlabCache#relistLocked}, out of line (the caller holds the cache's lock). */
    static void relistLocked(final SlabCache c, final Slab s) {
        try {
            relist.invokeExact(c, s);
        } catch (final Throwable t) {
            throw unchecked(t);
        }
    }

    /** @return {@code t} itself when unchecked (an {@code Error} is thrown from here), else wrapped */
    private static RuntimeException unchecked(final Throwable t) {
        if (t instanceof Error) {
            throw (Error) t;
        }
        return t instanceof RuntimeException ? (RuntimeException) t : new IllegalStateException(t);
    }

    private static MethodHandle find(final Class<?> owner, final String name, final MethodType type) {
        try {
            return MethodHandles.lookup().findVirtual(owner, name, type);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
