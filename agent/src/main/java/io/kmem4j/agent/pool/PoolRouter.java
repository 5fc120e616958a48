package io.kmem4j.agent.pool;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;

import io.kmem4j.agent.bridge.AgentThread;
import io.kmem4j.agent.bridge.BootstrapBridge;
import io.kmem4j.agent.log.Failures;
import io.kmem4j.core.SlabAllocator;
import org.agrona.BufferUtil;

/**
 * The functions behind the bridge's pool fields ({@link BootstrapBridge}): allocation from the
 * explicit (no cleaner) flavour, release of kmem4j's buffers, resize. The rule on every path: a
 * buffer kmem4j does not own goes to the pool's own code unchanged, the pool's own memory never goes
 * into kmem4j, and kmem4j's memory never reaches the pool's own release (e.g.
 * {@code Unsafe.freeMemory}) while it is still kmem4j's.
 *
 * <p>Threads: any thread that calls a rewritten pool method. Never throws, except
 * {@code IllegalArgumentException("duplicate or slice")} for a view of kmem4j's memory on a release
 * or resize path (as {@code Unsafe.invokeCleaner}); any failure inside kmem4j is counted, logged
 * once, and answered with "the pool's own code".
 */
public final class PoolRouter {
    private final SlabAllocator allocator;
    private final Failures failures = new Failures();
    public final LongAdder allocations = new LongAdder();
    public final LongAdder allocationsPassed = new LongAdder();
    public final LongAdder releases = new LongAdder();
    public final LongAdder releasesPassed = new LongAdder();
    public final LongAdder resizes = new LongAdder();
    public final LongAdder resizesPassed = new LongAdder();

    /** Set at agent shutdown: no more allocations from kmem4j, on any path (releases still come back). */
    private volatile boolean stopped;

    public PoolRouter(final SlabAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * Agent shutdown: pool allocations and resizes no longer take memory from kmem4j (the pool's own
     * code allocates, as after {@code Kmem4jBridge.explicit} is cleared); releases and resizes of
     * kmem4j's buffers still give them back. Threads: any (the shutdown hook).
     */
    public void stopAllocating(final BootstrapBridge.Members bridge) throws IllegalAccessException {
        stopped = true;
        bridge.explicit.set(null);
    }

    public long failures() {
        return failures.count();
    }

    /** Points the bridge's pool fields at this router. */
    public void connect(final BootstrapBridge.Members bridge) throws IllegalAccessException {
        bridge.release.set((java.util.function.Predicate<ByteBuffer>) this::release);
        bridge.releaseThenOriginal.set((java.util.function.Predicate<ByteBuffer>) this::releaseThenOriginal);
        bridge.resize.set((java.util.function.BiFunction<ByteBuffer, Long, Object>) this::resize);
        bridge.resized.set((java.util.function.BiConsumer<Object, ByteBuffer>) this::resized);
        bridge.explicit.set((java.util.function.LongFunction<ByteBuffer>) this::allocate);
    }

    /** {@code Kmem4jBridge.explicit}: an explicit buffer of {@code size} bytes, or {@code null} for the pool's own. */
    ByteBuffer allocate(final long size) {
        ByteBuffer b = null;
        if (size >= 0 && size <= Integer.MAX_VALUE && !stopped && !(Thread.currentThread() instanceof AgentThread)) {
            try {
                b = allocator.tryAllocateExplicit((int) size);
            } catch (final Throwable t) {
                failures.record("pool allocation of " + size + " bytes", "the pool's own allocation", t);
            }
        }
        (b != null ? allocations : allocationsPassed).increment();
        return b;
    }

    /** {@code Kmem4jBridge.release}: true when the buffer was kmem4j's (released now, or a second release). */
    boolean release(final ByteBuffer buffer) {
        return release(buffer, false);
    }

    /** {@code Kmem4jBridge.releaseThenOriginal}: as {@link #release(ByteBuffer)}, but false after an explicit buffer went back. */
    boolean releaseThenOriginal(final ByteBuffer buffer) {
        return release(buffer, true);
    }

    private boolean release(final ByteBuffer buffer, final boolean thenOriginal) {
        if (buffer == null || !buffer.isDirect()) {
            releasesPassed.increment();
            return false;
        }
        final boolean explicit;
        try {
            explicit = allocator.isExplicit(buffer); // implies owns(): the preset's common case looks up once
            if (!explicit && !allocator.owns(buffer)) {
                return notOwned(buffer);
            }
            if (!allocator.freeOnce(buffer)) {
                return true; // a racing release took it back first: counted as a double free, body skipped
            }
        } catch (final IllegalArgumentException e) {
            throw e;
        } catch (final Throwable t) {
            failures.record("pool release of " + buffer, "the pool's own release", t);
            return false;
        }
        releases.increment();
        return !(thenOriginal && explicit);
    }

    /** Not a root kmem4j owns now: a view of kmem4j's memory, a second release, or the pool's own buffer. */
    private boolean notOwned(final ByteBuffer buffer) {
        if (allocator.ownsMemoryOf(buffer)) {
            throw new IllegalArgumentException("duplicate or slice");
        }
        if (buffer.capacity() > 0 && BufferUtil.address(buffer) == 0) {
            allocator.free(buffer); // an explicit buffer kmem4j already took back: counted as a double free
            return true;
        }
        releasesPassed.increment();
        return false;
    }

    /**
     * {@code Kmem4jBridge.resize} (see {@link PoolResizeAdvice}): a direct buffer (served), a
     * {@link Detached} token (kmem4j's old buffer detached; the pool's body allocates, then
     * {@link #resized} finishes), or {@code null} (not kmem4j's buffer).
     */
    Object resize(final ByteBuffer old, final Long size) {
        if (old == null || !old.isDirect()) {
            resizesPassed.increment();
            return null;
        }
        final long address;
        try {
            if (!allocator.owns(old)) {
                if (allocator.ownsMemoryOf(old)) {
                    throw new IllegalArgumentException("duplicate or slice");
                }
                resizesPassed.increment();
                return null;
            }
            final ByteBuffer n = allocate(size);
            if (n != null) {
                n.put(0, old, 0, Math.min(old.capacity(), n.capacity()));
                allocator.free(old);
                resizes.increment();
                return n;
            }
            if (!allocator.isExplicit(old)) {
                throw new IllegalArgumentException("a buffer with a cleaner cannot be resized by a pool's resize"
                    + " method to a size kmem4j does not serve: " + old);
            }
            address = allocator.detach(old);
        } catch (final IllegalArgumentException e) {
            throw e;
        } catch (final Throwable t) {
            failures.record("pool resize of " + old, "the pool's own resize", t);
            return null;
        }
        if (address == 0) {
            resizesPassed.increment(); // released already (or by a racing caller): the body sees address 0
            return null;
        }
        resizes.increment();
        return new Detached(old, address);
    }

    /**
     * {@code Kmem4jBridge.resized}: the pool's resize body ran on a {@link Detached} buffer. The old
     * buffer gets its block back; when the body returned a buffer, the old contents are copied into
     * it and the old block is released; when it returned {@code null} or threw ({@code result} is
     * {@code null}) the old buffer stays the caller's, valid with its contents (realloc semantics).
     */
    void resized(final Object pending, final ByteBuffer result) {
        final Detached d = (Detached) pending;
        try {
            allocator.reattach(d.old, d.address);
            if (result == null || result == d.old) {
                return;
            }
            try {
                result.put(0, d.old, 0, Math.min(d.old.capacity(), result.capacity()));
            } finally {
                allocator.free(d.old);
            }
        } catch (final Throwable t) {
            failures.record("end of the pool resize of " + d.old, "the pool's own result", t);
        }
    }

    /** A kmem4j buffer whose block is detached while a pool's resize body runs (see {@link #resized}). */
    static final class Detached {
        final ByteBuffer old;
        final long address;

        Detached(final ByteBuffer old, final long address) {
            this.old = old;
            this.address = address;
        }
    }
}
