package io.kmem4j.agent;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;

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
final class PoolRouter {
    private final SlabAllocator allocator;
    private final Failures failures = new Failures();
    final LongAdder allocations = new LongAdder();
    final LongAdder allocationsPassed = new LongAdder();
    final LongAdder releases = new LongAdder();
    final LongAdder releasesPassed = new LongAdder();
    final LongAdder resizes = new LongAdder();
    final LongAdder resizesPassed = new LongAdder();

    /** Set at agent shutdown: no more allocations from kmem4j, on any path (releases still come back). */
    private volatile boolean stopped;

    PoolRouter(final SlabAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * Agent shutdown: pool allocations and resizes no longer take memory from kmem4j (the pool's own
     * code allocates, as after {@code Kmem4jBridge.explicit} is cleared); releases and resizes of
     * kmem4j's buffers still give them back. Threads: any (the shutdown hook).
     */
    void stopAllocating(final BootstrapBridge.Members bridge) throws IllegalAccessException {
        stopped = true;
        bridge.explicit.set(null, null);
    }

    long failures() {
        return failures.count();
    }

    /** Points the bridge's pool fields at this router. */
    void connect(final BootstrapBridge.Members bridge) throws IllegalAccessException {
        bridge.release.set(null, (java.util.function.Predicate<ByteBuffer>) this::release);
        bridge.releaseThenOriginal.set(null, (java.util.function.Predicate<ByteBuffer>) this::releaseThenOriginal);
        bridge.resize.set(null, (java.util.function.BiFunction<ByteBuffer, Long, ByteBuffer>) this::resize);
        bridge.explicit.set(null, (java.util.function.LongFunction<ByteBuffer>) this::allocate);
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
            if (!allocator.owns(buffer)) {
                return notOwned(buffer);
            }
            explicit = allocator.isExplicit(buffer);
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
     * {@code Kmem4jBridge.resize} (see {@link PoolResizeAdvice}): a direct buffer (served), a heap
     * buffer holding the old contents (kmem4j's block released; the pool's body allocates), or
     * {@code null} (not kmem4j's buffer).
     */
    ByteBuffer resize(final ByteBuffer old, final Long size) {
        if (old == null || !old.isDirect()) {
            resizesPassed.increment();
            return null;
        }
        final ByteBuffer saved;
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
            saved = ByteBuffer.allocate(old.capacity()).put(0, old, 0, old.capacity());
            allocator.free(old);
        } catch (final IllegalArgumentException e) {
            throw e;
        } catch (final Throwable t) {
            failures.record("pool resize of " + old, "the pool's own resize", t);
            return null;
        }
        resizes.increment();
        return saved;
    }
}
