package io.kmem4j.core;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Optional leak detection for explicit buffers ({@code explicitLeakDetection=true}): each explicit
 * buffer is registered with a {@link Cleaner}; when GC finds one that was never passed to
 * {@code free}, the leak is counted ({@link AllocatorStats#leaksDetected()}), reported as a JFR
 * {@code io.kmem4j.Leak} event, and the block is given back to the allocator (the buffer and every
 * view of it are unreachable by then: views keep their root alive). Costs a registration per
 * explicit allocation and a map update per free, only when on.
 *
 * <p>Threads: {@link #track} and {@link #untrack} from any thread; the check runs on the JDK
 * cleaner's daemon thread.
 */
final class LeakDetector {
    private static final Cleaner CLEANER = Cleaner.create();

    private final SlabAllocator allocator;
    /** Non-null when sites are sampled: a leaked buffer gives its site's share back. */
    private final SiteSampler sampler;
    private final Map<Long, Tracked> tracked = new ConcurrentHashMap<>();
    private final LongAdder leaks = new LongAdder();

    /**
     * @param allocator whose free path takes a leaked block back
     * @param sampler   the allocator's site sampler, or {@code null}
     */
    LeakDetector(final SlabAllocator allocator, final SiteSampler sampler) {
        this.allocator = allocator;
        this.sampler = sampler;
    }

    /**
     * Watches a new explicit buffer. Failure atomic: when registering throws (heap exhausted), nothing
     * stays registered.
     */
    void track(final ByteBuffer buffer, final long address, final int capacity) {
        final Tracked t = new Tracked(address, capacity);
        t.cleanable = CLEANER.register(buffer, t); // buffer is strongly reachable here: no early run
        try {
            tracked.put(address, t);
        } catch (final Throwable e) {
            t.freed = true;
            t.cleanable.clean();
            throw e;
        }
    }

    /** The buffer at {@code address} was freed explicitly: forget it. */
    void untrack(final long address) {
        final Tracked t = tracked.remove(address);
        if (t != null) {
            t.freed = true;
            t.cleanable.clean();
        }
    }

    long leaks() {
        return leaks.sum();
    }

    private final class Tracked implements Runnable {
        private final long address;
        private final int capacity;
        volatile boolean freed;
        volatile Cleaner.Cleanable cleanable;

        Tracked(final long address, final int capacity) {
            this.address = address;
            this.capacity = capacity;
        }

        @Override
        public void run() {
            if (freed || !tracked.remove(address, this)) {
                return;
            }
            if (sampler != null) {
                sampler.releasedExplicit(address, capacity);
            }
            allocator.release(address, capacity, null);
            leaks.increment(); // after the release, so a reader that sees the leak sees the block back
            if (Events.recorder()) {
                final Events.Leak e = new Events.Leak();
                e.capacity = capacity;
                e.commit();
            }
        }
    }
}
