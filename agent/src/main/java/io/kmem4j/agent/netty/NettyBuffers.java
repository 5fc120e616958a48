package io.kmem4j.agent.netty;

import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import io.kmem4j.agent.bridge.AgentThread;
import io.kmem4j.agent.config.AgentConfig;
import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.agent.log.Failures;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;

/**
 * The {@code presets=netty-allocator} hook ({@code java.nio.Kmem4jBridge.nettyBuffer}): Netty's pooled
 * and adaptive allocators' direct buffers of the sizes kmem4j serves become Netty {@code ByteBuf}s
 * over kmem4j's <em>explicit</em> blocks (no cleaner), and go back to kmem4j when Netty releases
 * them (reference count 0), exactly once. Shapes as Netty's own: capacity and the initial
 * capacity asked for are equal, reader and writer index 0, max capacity as asked, byte order
 * big-endian, memory not zeroed (as Netty's pooled buffers: what an earlier Netty buffer left there;
 * a block's first hand-out is zeroed). A buffer grown past the
 * largest size class, and every buffer larger than that, is Netty's own.
 *
 * <p>The blocks come from an allocator of their own ({@link #configFor}): the agent's settings, size
 * classes up to {@code nettyMaxSizeClassBytes} (256 KiB by default) and no zeroing, which is Netty's
 * pooled contract (a pooled buffer holds what its last user left); its blocks never reach {@code allocateDirect}'s callers, whose buffers stay all zeros.
 * Being separate, its beans and {@code slabtop --allocator netty} show Netty's buffers alone.
 *
 * <p>A released buffer is kept, constructed and with its block, for its thread's next buffer of the
 * same size class ({@link ReleasedBuffers}), so its block's capacity is its size class's and its
 * limit the capacity asked for.
 *
 * <p>Each copy of Netty (a class loader, a relocation such as gRPC's) is found from the allocator's
 * class ({@link NettyCopy}) the first time one of its allocators asks. Threads: any thread that
 * allocates or releases a Netty buffer. Never throws to Netty: any failure inside kmem4j is counted,
 * logged once, and answered with "Netty's own allocation".
 */
public final class NettyBuffers implements BiFunction<Object, Long, Object> {
    private final SlabAllocator allocator;
    private final Instrumentation inst;
    private final int minCapacity;
    private final int maxCapacity;
    private final Failures failures = new Failures();
    /** Of {@link #buffers()}: those not served again from a thread's released buffers (new buffers). */
    private final LongAdder made = new LongAdder();
    /** Requests left to Netty's own allocator: size outside kmem4j's classes, kmem4j stopped or out of budget, copy left alone. */
    public final LongAdder buffersPassed = new LongAdder();
    /** Growths of kmem4j's Netty buffers served by kmem4j. */
    public final LongAdder grown = new LongAdder();
    /** Of {@link #releases()}: blocks given back to kmem4j (not kept for reuse). */
    private final LongAdder freed = new LongAdder();
    private final ReleasedBuffers released;
    /** The copies of Netty seen, one line each. */
    public final java.util.List<String> copies = new java.util.concurrent.CopyOnWriteArrayList<>();
    public final LongAdder copiesLeftAlone = new LongAdder();

    /** Allocator class -> its Netty copy (one per AbstractByteBufAllocator class). */
    private final ClassValue<NettyCopy> byAllocatorClass = new ClassValue<>() {
        @Override
        protected NettyCopy computeValue(final Class<?> type) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                final String name = c.getName();
                if (name.endsWith(NettyCopy.ABSTRACT_ALLOCATOR)) {
                    final String prefix = name.substring(0, name.length() - NettyCopy.ABSTRACT_ALLOCATOR.length());
                    if (prefix.isEmpty() || prefix.endsWith(".")) {
                        return announced(byAbstractClass.get(c));
                    }
                }
            }
            return NettyCopy.leftAlone("", type.getName() + " is no Netty allocator", null);
        }
    };

    /**
     * A copy's {@code AbstractByteBufAllocator} class -> the copy, kmem4j's classes defined in it. No side
     * effect here but that definition, which is idempotent: threads that meet a copy at the same time
     * (a gRPC client's and server's event loops) may each compute one, and the ClassValue keeps one of
     * them; {@link #announced} logs and lists only that one.
     */
    private final ClassValue<NettyCopy> byAbstractClass = new ClassValue<>() {
        @Override
        protected NettyCopy computeValue(final Class<?> abstractAllocator) {
            final String name = abstractAllocator.getName();
            final String prefix = name.substring(0, name.length() - NettyCopy.ABSTRACT_ALLOCATOR.length());
            try {
                return NettyCopy.define(abstractAllocator, prefix, NettyBuffers.this, inst);
            } catch (final VirtualMachineError e) {
                throw e; // nothing cached: apply() answers "Netty's own" this time, and the next call tries again
            } catch (final Throwable t) {
                final ClassLoader loader = abstractAllocator.getClassLoader();
                return NettyCopy.leftAlone(prefix, prefix + "io.netty in " + loader + ": left alone (" + t + ")",
                    "Netty's buffers in " + loader + " stay Netty's own: this copy of Netty does not have the members"
                        + " kmem4j needs (" + t + ")");
            }
        }
    };

    /** Logs the copy of Netty kept for a class loader and lists it in the bean, once per copy. */
    private NettyCopy announced(final NettyCopy copy) {
        if (copy.firstAnnouncement()) {
            if (copy.served()) {
                AgentLog.get(NettyBuffers.class).info("serving Netty's pooled and adaptive direct buffers of {}..{}"
                    + " bytes: {}", minCapacity, maxCapacity, copy);
            } else {
                copiesLeftAlone.increment();
                AgentLog.get(NettyBuffers.class).warn("{}", copy.warning);
            }
            copies.add(copy.description);
        }
        return copy;
    }

    /**
     * The counts of the reuse path are the threads' own ({@link ReleasedBuffers#reused}, {@link
     * ReleasedBuffers#kept}): three {@code LongAdder} increments a buffer cost 57-60 against 40-47 ns a
     * ring operation (JMH {@code RingBenchmark.ring1 -p allocator=kmem4jNetty}, 256 B, JDK 17).
     *
     * @return buffers kmem4j served to Netty's allocators (a racy sum, for the bean); a kept buffer whose
     *         reset failed counts as served and released
     */
    public long buffers() {
        return made.sum() + released.reused();
    }

    /** @return of {@link #buffers()}: released buffers served again to their thread, constructed ({@link ReleasedBuffers}) */
    public long reused() {
        return released.reused();
    }

    /** @return blocks given back by Netty (release, or the old block of a growth); a buffer kept for reuse counts here too */
    public long releases() {
        return freed.sum() + released.kept();
    }

    /** Set at agent shutdown: no more blocks for Netty (releases still come back). */
    private volatile boolean stopped;

    /**
     * @param agent the agent's allocator configuration
     * @return the configuration of the allocator behind Netty's buffers with the default largest class:
     *         {@link AgentConfig#nettyAllocatorConfig}
     */
    public static SlabAllocatorConfig configFor(final SlabAllocatorConfig agent) {
        return AgentConfig.nettyAllocatorConfig(agent, -1);
    }

    /** @return the allocator behind Netty's buffers */
    public SlabAllocator allocator() {
        return allocator;
    }

    /**
     * @param allocator an allocator of {@link #configFor} (or any, in tests)
     * @param inst      to open a named Netty module to kmem4j
     */
    public NettyBuffers(final SlabAllocator allocator, final Instrumentation inst) {
        this.allocator = allocator;
        this.inst = inst;
        this.minCapacity = allocator.config().minCapacityBytes();
        this.maxCapacity = allocator.maxCapacity();
        this.released = new ReleasedBuffers(allocator);
        allocator.onReap(released::giveBackEnded);
    }

    /**
     * Gives back to kmem4j the buffers the calling thread keeps for reuse ({@link ReleasedBuffers}).
     * Threads: any (its own buffers).
     *
     * @return buffers given back
     */
    public long giveBackKept() {
        return released.giveBackMine();
    }

    /** @return bytes of blocks kept for reuse by live threads and threads not yet reaped (a racy sum) */
    public long keptBytes() {
        return released.keptBytes();
    }

    /** Agent shutdown: Netty's allocators allocate for themselves again; kmem4j's buffers still come back. */
    public void stopAllocating() {
        stopped = true;
    }

    public long failures() {
        return failures.count();
    }

    private boolean serves(final int capacity) {
        return capacity >= minCapacity && capacity <= maxCapacity && !stopped
            && !(Thread.currentThread() instanceof AgentThread);
    }

    /**
     * {@code Kmem4jBridge.nettyBuffer}: Netty's {@code ByteBuf} over a kmem4j block, or {@code null}
     * for Netty's own body.
     *
     * @param nettyAllocator the allocator whose {@code newDirectBuffer} runs
     * @param capacities     {@code maxCapacity << 32 | initialCapacity}
     */
    @Override
    public Object apply(final Object nettyAllocator, final Long capacities) {
        final long c = capacities;
        final int initial = (int) c;
        if (!serves(initial)) {
            buffersPassed.increment();
            return null;
        }
        ByteBuffer block = null;
        Object kept = null;
        try {
            final int max = (int) (c >>> 32);
            final int cls = allocator.sizeClassIndex(initial);
            if ((kept = released.pop(nettyAllocator, cls)) != null) {
                @SuppressWarnings("unchecked")
                final LongFunction<Object> reset = (LongFunction<Object>) kept;
                return reset.apply(c); // reset, through Netty's leak detection (counted by pop)
            }
            final NettyCopy copy = byAllocatorClass.get(nettyAllocator.getClass());
            if (!copy.served()
                || (block = allocator.tryAllocateExplicit(copy.reuses() ? allocator.sizeClassBytes(cls) : initial)) == null) {
                buffersPassed.increment();
                return null;
            }
            final Object buf = copy.create(nettyAllocator, (ByteBuffer) block.limit(initial), max);
            made.increment();
            return buf;
        } catch (final Throwable t) {
            giveBack(kept != null ? (ByteBuffer) ((Supplier<?>) kept).get() : block);
            if (kept != null) {
                freed.increment(); // its reset failed: counted served by pop, and now released (no count goes back)
            }
            failures.record("a Netty direct buffer of " + initial + " bytes", "Netty's own allocator", t);
            buffersPassed.increment();
            return null;
        }
    }

    private void giveBack(final ByteBuffer block) {
        if (block != null) {
            try {
                allocator.free(block);
            } catch (final Throwable ignored) {
                // counted as the failure that led here
            }
        }
    }

    /** A kmem4j buffer's growth (Netty 4.1's {@code allocateDirect}): a block, or {@code null} for Netty's own. */
    ByteBuffer grow(final int capacity) {
        if (!serves(capacity)) {
            return null;
        }
        try {
            final ByteBuffer b = allocator.tryAllocateExplicit(capacity);
            if (b != null) {
                grown.increment();
            }
            return b;
        } catch (final Throwable t) {
            failures.record("growth of a Netty buffer to " + capacity + " bytes", "Netty's own allocation", t);
            return null;
        }
    }

    /** Netty 4.2's growth: {@link #grow} wrapped in the copy's {@code CleanableDirectBuffer} ({@code wrap}). */
    IntFunction<Object> growCleanable(final MethodHandle wrap) {
        return capacity -> {
            final ByteBuffer b = grow(capacity);
            if (b == null) {
                return null;
            }
            try {
                return (Object) wrap.invokeExact(b);
            } catch (final Throwable t) {
                giveBack(b);
                failures.record("growth of a Netty buffer to " + capacity + " bytes", "Netty's own allocation", t);
                return null;
            }
        };
    }

    /**
     * Netty releases a buffer that still has the block it was made with ({@code deallocate()}, reference
     * count 0): kept for its thread's next buffer of its size class, or its block given back.
     *
     * @param buffer         the {@code Kmem4jDirectByteBuf}, whose {@link Supplier#get()} is its block
     * @param nettyAllocator its {@code alloc()}
     * @return true when done (skip Netty's body); false: Netty's {@code deallocate()} runs, and gives the
     *         block back through {@link #release}
     */
    boolean recycle(final Object buffer, final Object nettyAllocator) {
        try {
            final ByteBuffer block = (ByteBuffer) ((Supplier<?>) buffer).get();
            if (!stopped && released.push(buffer, nettyAllocator, allocator.sizeClassIndex(block.capacity()))) {
                return true; // counted by push
            }
            return release(block);
        } catch (final Throwable t) {
            failures.record("release of a Netty buffer", "Netty's own release", t);
            return false;
        }
    }

    /**
     * Netty frees a buffer ({@code freeDirect}, or {@code clean()} of a grown one): true when it was
     * kmem4j's block, now given back (skip Netty's body); false for Netty's own buffer.
     */
    boolean release(final ByteBuffer buffer) {
        try {
            if (allocator.freeIfExplicit(buffer)) {
                freed.increment();
                return true;
            }
            return false;
        } catch (final Throwable t) {
            failures.record("release of a Netty buffer " + buffer, "Netty's own release", t);
            return true; // never hand kmem4j's memory to Netty's free
        }
    }
}
