package io.kmem4j.benchmarks;

import static io.kmem4j.benchmarks.Unsafes.allocateMemory;
import static io.kmem4j.benchmarks.Unsafes.freeMemory;
import static io.kmem4j.benchmarks.Unsafes.invokeCleaner;
import static io.kmem4j.benchmarks.Unsafes.setMemory;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import io.kmem4j.core.RootBuffers;
import org.agrona.BufferUtil;

/**
 * The {@code floor} flavour: the least any allocator that hands out tracked {@code ByteBuffer}s
 * (root buffers with a JDK cleaner, like kmem4j's) can cost on this JDK.
 *
 * <p>It keeps only what such an allocator cannot avoid:
 * <ul>
 *   <li>taking a block: a pop from a plain {@code long[]} free stack owned by the thread (no
 *       size classes, no locks, no statistics);</li>
 *   <li>zeroing it with {@code Unsafe.setMemory};</li>
 *   <li>building the buffer with the same JDK constructor kmem4j uses ({@link RootBuffers#wrap}),
 *       which allocates the buffer, a new {@link Runnable} and the JDK {@code Cleaner} that links
 *       itself into the JDK's cleaner list;</li>
 *   <li>releasing: {@code Unsafe.invokeCleaner} unlinks the cleaner and runs the runnable, which
 *       pushes the block back on its free stack.</li>
 * </ul>
 *
 * <p>Memory: one {@code Unsafe.allocateMemory} region per trial, split into one part per
 * benchmark thread, each part carved into fixed blocks of the benchmark's size rounded up to a
 * 64-byte cache line (at most 64 KiB; a workload that mixes sizes passes its largest): {@code slots + 1}
 * blocks per thread, enough for a full ring since a slot is released before it is refilled. The region is not counted against
 * {@code MaxDirectMemorySize} (kmem4j counts its chunks, not its buffers, so neither pays per buffer).
 *
 * <p>Rings only: a block must be released on the thread that took it (the stack is not thread-safe),
 * which is always true of the ring workloads, including at tear-down.
 */
final class Floor extends Flavour {
    /** Largest block, bytes. */
    static final int MAX_BLOCK = 64 << 10;

    private final int stride;
    private final int blocksPerRing;
    private final int rings;
    private final long region;
    private final AtomicInteger nextRing = new AtomicInteger();

    Floor(final int size, final int threads, final int slots) {
        super("floor", size);
        if (size <= 0 || size > MAX_BLOCK) {
            throw new IllegalArgumentException("allocator=floor serves 1.." + MAX_BLOCK + " bytes, not " + size);
        }
        this.stride = (size + 63) & ~63;
        this.blocksPerRing = slots + 1;
        this.rings = threads;
        this.region = allocateMemory((long) stride * blocksPerRing * threads);
    }

    @Override
    Object allocate(final int capacity) {
        throw new UnsupportedOperationException("allocator=floor keeps per-thread free stacks: ring workloads only");
    }

    @Override
    void release(final Object buffer) {
        throw new UnsupportedOperationException("allocator=floor keeps per-thread free stacks: ring workloads only");
    }

    @Override
    Ring newRing(final int slots) {
        final int k = nextRing.getAndIncrement();
        if (k >= rings || slots + 1 > blocksPerRing) {
            throw new IllegalStateException("allocator=floor was sized for " + rings + " ring(s) of "
                + (blocksPerRing - 1) + " slots");
        }
        final FreeStack stack = new FreeStack(region + (long) k * blocksPerRing * stride, blocksPerRing, stride);
        return new FloorRing(this, stack, slots);
    }

    ByteBuffer allocate(final FreeStack stack, final int capacity) {
        final long a = stack.pop();
        setMemory(a, capacity, (byte) 0);
        return RootBuffers.wrap(a, capacity, new Push(stack, a));
    }

    @Override
    String stats() {
        return "blockStride=" + stride + " blocksPerThread=" + blocksPerRing;
    }

    @Override
    public void close() {
        freeMemory(region);
    }

    /** A thread's free blocks: a plain array stack. */
    static final class FreeStack {
        private final long[] blocks;
        private int top;

        FreeStack(final long base, final int count, final int stride) {
            blocks = new long[count];
            for (int i = 0; i < count; i++) {
                blocks[i] = base + (long) (count - 1 - i) * stride; // lowest address on top
            }
            top = count;
        }

        long pop() {
            if (top == 0) {
                throw new IllegalStateException("floor free stack empty");
            }
            return blocks[--top];
        }

        void push(final long block) {
            blocks[top++] = block;
        }
    }

    /** The cleaner's thunk: gives the block back. */
    static final class Push implements Runnable {
        private final FreeStack stack;
        private final long block;

        Push(final FreeStack stack, final long block) {
            this.stack = stack;
            this.block = block;
        }

        @Override
        public void run() {
            stack.push(block);
        }
    }

    /** A ring of floor buffers, released with {@code Unsafe.invokeCleaner}. */
    static final class FloorRing extends Ring {
        private final Floor floor;
        private final FreeStack stack;
        private final ByteBuffer[] slots;

        FloorRing(final Floor floor, final FreeStack stack, final int slots) {
            this.floor = floor;
            this.stack = stack;
            this.slots = new ByteBuffer[slots];
        }

        @Override
        int slots() {
            return slots.length;
        }

        @Override
        boolean occupied(final int slot) {
            return slots[slot] != null;
        }

        @Override
        void allocate(final int slot, final int capacity) {
            if (capacity > floor.stride) {
                throw new IllegalArgumentException("allocator=floor was sized for " + floor.size + " bytes, not " + capacity);
            }
            slots[slot] = floor.allocate(stack, capacity);
        }

        @Override
        void release(final int slot) {
            final ByteBuffer b = slots[slot];
            slots[slot] = null;
            invokeCleaner(b);
        }

        @Override
        long address(final int slot) {
            return BufferUtil.address(slots[slot]);
        }
    }
}
