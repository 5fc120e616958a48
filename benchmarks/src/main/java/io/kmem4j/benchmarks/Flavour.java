package io.kmem4j.benchmarks;

import static io.kmem4j.benchmarks.Unsafes.allocateMemory;
import static io.kmem4j.benchmarks.Unsafes.freeMemory;
import static io.kmem4j.benchmarks.Unsafes.invokeCleaner;
import static io.kmem4j.benchmarks.Unsafes.setMemory;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.Locale;

import org.openjdk.jmh.infra.BenchmarkParams;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * One way to get and give back a direct buffer of a fixed size: the thing the benchmarks compare.
 * A fork runs exactly one flavour, so every call through this class is monomorphic and inlined.
 *
 * <table>
 *   <caption>Flavours (the {@code allocator} benchmark parameter)</caption>
 *   <tr><th>name</th><th>allocate</th><th>release</th></tr>
 *   <tr><td>{@code jdk}</td><td>{@code ByteBuffer.allocateDirect}</td><td>{@code Unsafe.invokeCleaner}</td></tr>
 *   <tr><td>{@code jdkGc}</td><td>{@code ByteBuffer.allocateDirect}</td><td>none: the buffer is dropped and GC's
 *       cleaner frees it (the cost shows up as GC and Reference Handler work)</td></tr>
 *   <tr><td>{@code kmem4jTracked}</td><td>{@code SlabAllocator.allocate}</td><td>{@code Unsafe.invokeCleaner}</td></tr>
 *   <tr><td>{@code kmem4jTrackedZeroOnFree}, {@code kmem4jExplicitZeroOnFree}</td><td>as above with
 *       {@code zeroOnFree=true}: memory is zeroed as it is released, not as it is allocated</td><td>as above</td></tr>
 *   <tr><td>{@code kmem4jExplicit}</td><td>{@code SlabAllocator.allocateExplicit} (no cleaner)</td>
 *       <td>{@code SlabAllocator.free}</td></tr>
 *   <tr><td>{@code nettyPooled}</td><td>{@code PooledByteBufAllocator.DEFAULT.directBuffer(size, size)}</td>
 *       <td>{@code ByteBuf.release()}</td></tr>
 *   <tr><td>{@code nettyAdaptive}</td><td>{@code new AdaptiveByteBufAllocator().directBuffer(size, size)}</td>
 *       <td>{@code ByteBuf.release()}</td></tr>
 *   <tr><td>{@code unsafe}</td><td>{@code Unsafe.allocateMemory} + {@code setMemory} (malloc, no buffer object)</td>
 *       <td>{@code Unsafe.freeMemory}</td></tr>
 *   <tr><td>{@code floor}</td><td>see {@link Floor}: a pop from a per-thread free stack, zeroing, and the
 *       JDK's mapped-buffer constructor with a cleaner</td><td>{@code Unsafe.invokeCleaner}</td></tr>
 * </table>
 *
 * Every flavour hands out zero-filled memory except Netty's (its buffers are not zeroed).
 */
abstract class Flavour implements AutoCloseable {
    /** All flavour names, in report order. */
    static final String[] NAMES = {
        "jdk", "jdkGc", "kmem4jTracked", "kmem4jExplicit", "kmem4jTrackedZeroOnFree", "kmem4jExplicitZeroOnFree",
        "nettyPooled", "nettyAdaptive", "unsafe", "floor"};

    final String name;
    final int size;

    Flavour(final String name, final int size) {
        this.name = name;
        this.size = size;
    }

    /**
     * @param name    one of {@link #NAMES}
     * @param size    bytes per buffer
     * @param threads benchmark threads that will each build a ring ({@link #newRing(int)})
     * @param slots   slots per ring
     * @return a new flavour; {@link #close()} it at the end of the trial
     */
    static Flavour create(final String name, final int size, final int threads, final int slots) {
        switch (name) {
            case "jdk":
                return new Jdk(size);
            case "jdkGc":
                return new JdkGc(size);
            case "kmem4jTracked":
                return new Kmem4jTracked(name, size, false);
            case "kmem4jExplicit":
                return new Kmem4jExplicit(name, size, false);
            case "kmem4jTrackedZeroOnFree":
                return new Kmem4jTracked(name, size, true);
            case "kmem4jExplicitZeroOnFree":
                return new Kmem4jExplicit(name, size, true);
            case "nettyPooled":
                return new NettyPooled(size);
            case "nettyAdaptive":
                return new NettyAdaptive(size);
            case "unsafe":
                return new RawUnsafe(size);
            case "floor":
                return new Floor(size, threads, slots);
            default:
                throw new IllegalArgumentException("unknown allocator '" + name + "', expected one of "
                    + String.join(", ", NAMES));
        }
    }

    /** @return a new buffer of {@link #size} bytes (object flavours only). */
    abstract Object allocate();

    /** Gives back a buffer from {@link #allocate()}, on any thread. */
    abstract void release(Object buffer);

    /**
     * @param slots ring slots
     * @return an empty ring for the calling thread; fill it on the thread that will use it
     */
    Ring newRing(final int slots) {
        return new ObjectRing(this, slots);
    }

    /** @return statistics worth reporting after a trial (after every buffer was released), or {@code null}. */
    String stats() {
        return null;
    }

    /** Prints {@link #stats()} on one line prefixed {@link Jvm#STATS_PREFIX}, for the report to pick up. */
    final void printStats(final BenchmarkParams params) {
        final String s = stats();
        if (s != null) {
            System.out.println(Jvm.STATS_PREFIX + " benchmark=" + params.getBenchmark() + " threads="
                + params.getThreads() + " allocator=" + name + " size=" + size + " " + s);
            System.out.flush();
        }
    }

    @Override
    public void close() {
    }

    // ------------------------------------------------------------------------------ rings

    /** One thread's ring of slots. Not thread-safe: used by the thread that filled it. */
    abstract static class Ring {
        /** @return the number of slots. */
        abstract int slots();

        /** Allocates into every slot. */
        final void fill() {
            for (int i = 0; i < slots(); i++) {
                replace(i);
            }
        }

        /** Releases what {@code slot} holds and allocates a new buffer into it. */
        abstract void replace(int slot);

        /** Releases every buffer held; the ring is empty afterwards. */
        abstract void releaseAll();
    }

    /** A ring of buffer objects, for every flavour with an object API. */
    static final class ObjectRing extends Ring {
        private final Flavour flavour;
        private final Object[] slots;

        ObjectRing(final Flavour flavour, final int slots) {
            this.flavour = flavour;
            this.slots = new Object[slots];
        }

        @Override
        int slots() {
            return slots.length;
        }

        @Override
        void replace(final int slot) {
            final Object old = slots[slot];
            if (old != null) {
                flavour.release(old);
            }
            slots[slot] = flavour.allocate();
        }

        @Override
        void releaseAll() {
            for (int i = 0; i < slots.length; i++) {
                final Object b = slots[i];
                if (b != null) {
                    slots[i] = null;
                    flavour.release(b);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------ flavours

    /** {@code ByteBuffer.allocateDirect} + {@code Unsafe.invokeCleaner}. */
    static final class Jdk extends Flavour {
        Jdk(final int size) {
            super("jdk", size);
        }

        @Override
        Object allocate() {
            return ByteBuffer.allocateDirect(size);
        }

        @Override
        void release(final Object buffer) {
            invokeCleaner((ByteBuffer) buffer);
        }
    }

    /** {@code ByteBuffer.allocateDirect}, then dropped: GC finds it and its cleaner frees it. */
    static final class JdkGc extends Flavour {
        JdkGc(final int size) {
            super("jdkGc", size);
        }

        @Override
        Object allocate() {
            return ByteBuffer.allocateDirect(size);
        }

        @Override
        void release(final Object buffer) {
            // dropped: the slot is overwritten and the GC-driven cleaner frees the memory later
        }
    }

    /**
     * Base of the kmem4j flavours: one {@link SlabAllocator} per trial with the default configuration
     * except zeroing: {@code kmem4jTracked} and {@code kmem4jExplicit} zero on allocation, the
     * *ZeroOnFree names on release (the default since this comparison).
     */
    abstract static class Kmem4j extends Flavour {
        final SlabAllocator allocator;

        Kmem4j(final String name, final int size, final boolean zeroOnFree) {
            super(name, size);
            this.allocator = new SlabAllocator(SlabAllocatorConfig.builder().zeroOnFree(zeroOnFree).build());
        }

        @Override
        String stats() {
            final AllocatorStats s = allocator.stats();
            final CacheStats c = s.caches().stream()
                .max(Comparator.comparingLong(CacheStats::allocations)).orElse(null);
            return String.format(Locale.ROOT,
                "magazineHitRate=%.5f addressOrderScore=%.3f cache=%s allocations=%d fallbacks=%d"
                    + " remoteFreesSent=%d doubleFrees=%d liveBuffers=%d chunks=%d zeroOnFree=%b",
                s.magazineHitRate(), c == null ? 0.0 : c.addressOrderScore(), c == null ? "-" : c.name(),
                s.allocations(), s.fallbacks(), s.remoteFreesSent(), s.doubleFrees(), s.liveBuffers(), s.chunks(),
                allocator.config().zeroOnFree());
        }

        @Override
        public void close() {
            allocator.close();
        }
    }

    /** {@code SlabAllocator.allocate} (buffer with a JDK cleaner) + {@code Unsafe.invokeCleaner}. */
    static final class Kmem4jTracked extends Kmem4j {
        Kmem4jTracked(final String name, final int size, final boolean zeroOnFree) {
            super(name, size, zeroOnFree);
        }

        @Override
        Object allocate() {
            return allocator.allocate(size);
        }

        @Override
        void release(final Object buffer) {
            invokeCleaner((ByteBuffer) buffer);
        }
    }

    /** {@code SlabAllocator.allocateExplicit} (no cleaner) + {@code SlabAllocator.free}. */
    static final class Kmem4jExplicit extends Kmem4j {
        Kmem4jExplicit(final String name, final int size, final boolean zeroOnFree) {
            super(name, size, zeroOnFree);
        }

        @Override
        Object allocate() {
            return allocator.allocateExplicit(size);
        }

        @Override
        void release(final Object buffer) {
            allocator.free((ByteBuffer) buffer);
        }
    }

    /** Base of the Netty flavours. */
    abstract static class Netty extends Flavour {
        Netty(final String name, final int size) {
            super(name, size);
        }

        @Override
        void release(final Object buffer) {
            ((ByteBuf) buffer).release();
        }
    }

    /** {@code PooledByteBufAllocator.DEFAULT.directBuffer(size, size)} + {@code release()}, Netty's defaults. */
    static final class NettyPooled extends Netty {
        private final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

        NettyPooled(final int size) {
            super("nettyPooled", size);
        }

        @Override
        Object allocate() {
            return alloc.directBuffer(size, size);
        }

        @Override
        String stats() {
            return "useCacheForAllThreads=" + PooledByteBufAllocator.defaultUseCacheForAllThreads()
                + " directArenas=" + PooledByteBufAllocator.defaultNumDirectArena()
                + " usedDirectMemory=" + alloc.metric().usedDirectMemory();
        }
    }

    /** {@code AdaptiveByteBufAllocator.directBuffer(size, size)} + {@code release()}, Netty's defaults. */
    static final class NettyAdaptive extends Netty {
        private final AdaptiveByteBufAllocator alloc = new AdaptiveByteBufAllocator();

        NettyAdaptive(final int size) {
            super("nettyAdaptive", size);
        }

        @Override
        Object allocate() {
            return alloc.directBuffer(size, size);
        }

        @Override
        String stats() {
            return "usedDirectMemory=" + alloc.usedDirectMemory();
        }
    }

    /** {@code Unsafe.allocateMemory} + {@code setMemory} / {@code freeMemory}: malloc, no buffer object. */
    static final class RawUnsafe extends Flavour {
        RawUnsafe(final int size) {
            super("unsafe", size);
        }

        @Override
        Object allocate() {
            throw new UnsupportedOperationException("allocator=unsafe has no buffer objects: ring benchmarks only");
        }

        @Override
        void release(final Object buffer) {
            throw new UnsupportedOperationException("allocator=unsafe has no buffer objects: ring benchmarks only");
        }

        @Override
        Ring newRing(final int slots) {
            return new AddressRing(size, slots);
        }
    }

    /** A ring of raw addresses for {@link RawUnsafe}. */
    static final class AddressRing extends Ring {
        private final int size;
        private final long[] slots;

        AddressRing(final int size, final int slots) {
            this.size = size;
            this.slots = new long[slots];
        }

        @Override
        int slots() {
            return slots.length;
        }

        @Override
        void replace(final int slot) {
            final long old = slots[slot];
            if (old != 0) {
                freeMemory(old);
            }
            final long a = allocateMemory(size);
            setMemory(a, size, (byte) 0);
            slots[slot] = a;
        }

        @Override
        void releaseAll() {
            for (int i = 0; i < slots.length; i++) {
                if (slots[i] != 0) {
                    freeMemory(slots[i]);
                    slots[i] = 0;
                }
            }
        }
    }
}
