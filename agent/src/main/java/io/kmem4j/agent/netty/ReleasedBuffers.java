package io.kmem4j.agent.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import io.kmem4j.core.SlabAllocator;

/**
 * Released kmem4j Netty buffers kept constructed for their thread's next allocation of the same size
 * class: Bonwick's object caching (a freed object keeps its constructed state, so the next allocation
 * skips construction), as Netty's own pooled buffers are recycled. A kept buffer is the generated
 * {@code Kmem4jDirectByteBuf} with its block: the {@code ByteBuf}, its reference count object (4.2) and
 * the block's {@code DirectByteBuffer} are reused, so a Netty buffer costs no garbage and no pass
 * through the slab allocator.
 *
 * <pre>
 *   Netty release (refCnt 0) ─▶ deallocate() ─▶ push: this thread's stack of its size class
 *                                                (full, another allocator's, a grown buffer: the block goes back to kmem4j)
 *   newDirectBuffer(n, max)  ─▶ pop: this thread's stack of n's class ─▶ reset (indices, marks, refCnt 1,
 *                                                capacity n, max capacity max) ─▶ Netty's leak detection
 *   thread ended             ─▶ the reaper's next pass gives its stacks' blocks back to kmem4j
 * </pre>
 *
 * <p>Who keeps: a thread that allocates Netty buffers through kmem4j (an event loop), for one Netty
 * allocator at a time; a thread that only releases (an application executor handling inbound
 * buffers) keeps nothing, its releases go straight back to kmem4j (deferred remote frees when another
 * thread's). So, as with Netty's thread caches, a kept buffer waits where buffers are made. Virtual
 * threads and kmem4j's own threads keep nothing.
 *
 * <p>Bounds: per thread and size class at most {@value #MAX_PER_CLASS} buffers and
 * {@value #CLASS_BYTES} bytes of blocks (at least one buffer), per thread at most {@value #THREAD_BYTES}
 * bytes; at most {@link #maxThreads} threads keep (so all kept blocks stay within 64 MiB and 1/16 of
 * the direct-memory limit; under a limit below 16 MiB one thread keeps, within 1/16 of it). The bytes
 * are the blocks' own: a kept block also keeps its slab from going back (a slab of 8 blocks, 2 MiB
 * for the 256 KiB class), as every live buffer does. A live thread keeps its stacks while it lives, idle or not; it gives them
 * back when it releases a buffer of another Netty allocator (and lets go of the first, so a web
 * application's copy of Netty is not pinned by a container's threads); an ended thread's are given
 * back within one reaper interval.
 *
 * <p>Threads: {@link #pop} and {@link #push} on the calling thread's own stacks only (no lock, no
 * atomic: their counts too are the thread's own, summed when read, {@link #reused} and {@link #kept});
 * {@link #giveBackEnded} from the reaper, for threads that have ended.
 */
final class ReleasedBuffers {
    static final int MAX_PER_CLASS = 256;
    static final int CLASS_BYTES = 512 * 1024;
    static final int THREAD_BYTES = 1024 * 1024;
    static final long MAX_KEPT_BYTES = 64L * 1024 * 1024;

    private final SlabAllocator allocator;
    private final ThreadLocal<Stacks> local = new ThreadLocal<>();
    /** Every platform thread's stacks, for {@link #giveBackEnded}. */
    private final Map<Thread, Stacks> byThread = new ConcurrentHashMap<>();
    /** Marks a thread that keeps nothing (virtual, kmem4j's own, beyond {@link #maxThreads}). */
    private final Stacks none;
    /** At most this many threads keep buffers at a time (entries of {@link #byThread}). */
    final int maxThreads;
    /** Bytes of blocks one thread keeps at most: {@value #THREAD_BYTES}, less under a small limit. */
    final long threadBytes;
    /** Bytes of blocks of one size class a thread keeps at most (at least one block). */
    private final long classBytes;
    /** {@link Stacks#popped} and {@link Stacks#pushed} of the threads whose stacks were reaped. */
    private final LongAdder poppedReaped = new LongAdder();
    private final LongAdder pushedReaped = new LongAdder();

    ReleasedBuffers(final SlabAllocator allocator) {
        this(allocator, SlabAllocator.directMemoryLimit());
    }

    /** @param directLimit the JVM's direct-memory limit, bytes, or -1 when unknown */
    ReleasedBuffers(final SlabAllocator allocator, final long directLimit) {
        this.allocator = allocator;
        this.none = new Stacks(null, 0);
        final long kept = directLimit > 0 ? Math.min(MAX_KEPT_BYTES, directLimit / 16) : MAX_KEPT_BYTES;
        this.maxThreads = (int) Math.max(1, kept / THREAD_BYTES);
        this.threadBytes = Math.min(THREAD_BYTES, kept);
        this.classBytes = Math.min(CLASS_BYTES, threadBytes);
    }

    /**
     * @param nettyAllocator the allocator asking ({@code alloc()} of the buffer returned)
     * @param cls            the size class of the capacity asked for
     * @return a released buffer of that class and allocator, taken off this thread's stack (to be reset
     *         by the caller), or {@code null}
     */
    Object pop(final Object nettyAllocator, final int cls) {
        Stacks s = local.get();
        if (s == null) {
            s = attach(); // the first buffer this thread allocates: from now on it keeps what it releases
        }
        if (s.nettyAllocator != nettyAllocator) {
            return null;
        }
        final int n = s.counts[cls];
        if (n == 0) {
            return null;
        }
        final Object[] stack = s.buffers[cls];
        final Object b = stack[n - 1];
        stack[n - 1] = null;
        s.counts[cls] = n - 1;
        Counts.POPPED.setOpaque(s, s.popped + 1);
        if ((s.bytes -= allocator.sizeClassBytes(cls)) == 0) {
            s.nettyAllocator = null; // holds no class loader while it keeps nothing
        }
        return b;
    }

    /**
     * Keeps a buffer Netty released on this thread for reuse.
     *
     * @param buffer         the {@code Kmem4jDirectByteBuf}, whose {@link Supplier#get()} is its block
     * @param nettyAllocator its {@code alloc()}
     * @param cls            the size class of its block
     * @return true when kept; false when the caller must give the block back to kmem4j
     */
    boolean push(final Object buffer, final Object nettyAllocator, final int cls) {
        final Stacks s = local.get();
        if (s == null || s == none) {
            return false; // a thread that never allocated keeps nothing
        }
        if (s.nettyAllocator != nettyAllocator) {
            if (s.bytes != 0) {
                giveBack(s); // one allocator's buffers at a time: the last one released
            }
            s.nettyAllocator = nettyAllocator;
        }
        final int size = allocator.sizeClassBytes(cls);
        final int n = s.counts[cls];
        final int room = (int) Math.max(1, Math.min(MAX_PER_CLASS, classBytes / size));
        if (n >= room || s.bytes + size > threadBytes) {
            return false;
        }
        Object[] stack = s.buffers[cls];
        if (stack == null) {
            stack = s.buffers[cls] = new Object[room];
        }
        stack[n] = buffer;
        s.counts[cls] = n + 1;
        s.bytes += size;
        Counts.PUSHED.setOpaque(s, s.pushed + 1);
        return true;
    }

    private Stacks attach() {
        final Thread t = Thread.currentThread();
        final Stacks s;
        if (isVirtual(t) || t instanceof io.kmem4j.agent.bridge.AgentThread || byThread.size() >= maxThreads) {
            s = none; // (a racy bound: racing first allocations may pass it by a few threads)
        } else {
            s = new Stacks(t, allocator.sizeClassCount());
            byThread.put(t, s);
        }
        local.set(s);
        return s;
    }

    private static boolean isVirtual(final Thread t) {
        // Thread.isVirtual() is JDK 21; its class (java.lang.VirtualThread, ThreadBuilders$BoundVirtualThread) says it on 17
        return t.getClass().getName().contains("VirtualThread");
    }

    /**
     * The reaper: gives back to kmem4j the blocks of the stacks of threads that have ended (their writes
     * are visible once {@code isAlive()} is false). Threads: any; concurrent callers each claim a
     * thread's stacks by removing them from the map, so each is given back once.
     *
     * @return buffers given back
     */
    long giveBackEnded() {
        long given = 0;
        for (final java.util.Iterator<Stacks> it = byThread.values().iterator(); it.hasNext(); ) {
            final Stacks s = it.next();
            if (!s.owner.isAlive() && reaped(s)) {
                given += giveBack(s);
            }
        }
        return given;
    }

    /** Claims an ended thread's stacks, its counts moved to the reaped totals (atomically for {@link #sum}). */
    private synchronized boolean reaped(final Stacks s) {
        if (!byThread.remove(s.owner, s)) {
            return false; // another caller claimed them
        }
        poppedReaped.add(s.popped);
        pushedReaped.add(s.pushed);
        return true;
    }

    /** @return buffers served again from the stacks, since the start (a racy sum over live threads, for the bean) */
    long reused() {
        return sum(true);
    }

    /** @return buffers Netty released that were kept on the stacks, since the start (a racy sum, for the bean) */
    long kept() {
        return sum(false);
    }

    private synchronized long sum(final boolean popped) {
        long sum = popped ? poppedReaped.sum() : pushedReaped.sum();
        for (final Stacks s : byThread.values()) {
            sum += (long) (popped ? Counts.POPPED.getOpaque(s) : Counts.PUSHED.getOpaque(s));
        }
        return sum;
    }

    /**
     * Opaque access to {@link Stacks#popped} and {@link Stacks#pushed}: written by their thread, read by
     * {@link #sum} on another, whole (a plain {@code long} may be written in two halves, JLS 17.7) and never
     * older than a value already read; on x86-64 and AArch64 a plain load and store. A holder of its own,
     * so that its handles are made at the first Netty buffer, not in {@code premain}.
     */
    private static final class Counts {
        static final VarHandle POPPED;
        static final VarHandle PUSHED;

        static {
            try {
                final MethodHandles.Lookup l = MethodHandles.lookup();
                POPPED = l.findVarHandle(Stacks.class, "popped", long.class);
                PUSHED = l.findVarHandle(Stacks.class, "pushed", long.class);
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private Counts() {
        }
    }

    /**
     * Gives back to kmem4j the blocks of the calling thread's stacks (it keeps nothing until it releases
     * again). Threads: the owner.
     *
     * @return buffers given back
     */
    long giveBackMine() {
        final Stacks s = local.get();
        return s == null ? 0 : giveBack(s);
    }

    private long giveBack(final Stacks s) {
        long given = 0;
        for (int cls = 0; cls < s.counts.length; cls++) {
            for (int i = 0; i < s.counts[cls]; i++) {
                final ByteBuffer block = (ByteBuffer) ((Supplier<?>) s.buffers[cls][i]).get();
                s.buffers[cls][i] = null;
                allocator.freeIfExplicit(block);
                given++;
            }
            s.counts[cls] = 0;
        }
        s.bytes = 0;
        s.nettyAllocator = null;
        return given;
    }

    /** @return bytes of blocks kept in live and not yet reaped threads' stacks (a racy sum, for the bean) */
    long keptBytes() {
        long sum = 0;
        for (final Stacks s : byThread.values()) {
            sum += s.bytes;
        }
        return sum;
    }

    /**
     * One thread's stacks; written by that thread only (its counts and bytes read racily by {@link #sum} and
     * {@link #keptBytes}, the rest by the reaper after it ended).
     */
    private static final class Stacks {
        final Thread owner;
        /** The Netty allocator whose buffers these are (set by a push when the stacks are empty); {@code null} until then. */
        Object nettyAllocator;
        final Object[][] buffers;
        final int[] counts;
        long bytes;
        /** Buffers served from these stacks, and kept on them, since the thread's first ({@link Counts}). */
        long popped;
        long pushed;

        Stacks(final Thread owner, final int classes) {
            this.owner = owner;
            this.buffers = new Object[classes][];
            this.counts = new int[classes];
        }
    }
}
