package io.kmem4j.benchmarks;

import static io.kmem4j.benchmarks.Unsafes.invokeCleaner;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.Locale;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.agrona.BufferUtil;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.CacheStats;
import io.kmem4j.core.OwnedLifecycle;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * One way to get and give back a direct buffer: the thing the benchmarks compare. A fork runs
 * exactly one flavour, so every call through this class is monomorphic and inlined.
 *
 * <table>
 *   <caption>Flavours (the {@code allocator} benchmark parameter)</caption>
 *   <tr><th>name</th><th>allocate</th><th>release</th></tr>
 *   <tr><td>{@code jdk}</td><td>{@code ByteBuffer.allocateDirect}</td><td>{@code Unsafe.invokeCleaner}</td></tr>
 *   <tr><td>{@code kmem4jAgent}</td><td>{@code ByteBuffer.allocateDirect}, unchanged code, in a fork started with
 *       {@code -javaagent:agent/target/kmem4j-agent.jar} (the agent rewrote {@code allocateDirect})</td>
 *       <td>{@code Unsafe.invokeCleaner}</td></tr>
 *   <tr><td>{@code kmem4jTracked}</td><td>{@code SlabAllocator.allocate}, default configuration</td>
 *       <td>{@code Unsafe.invokeCleaner}</td></tr>
 *   <tr><td>{@code kmem4jExplicit}</td><td>{@code SlabAllocator.allocateExplicit} (no cleaner)</td>
 *       <td>{@code SlabAllocator.free}</td></tr>
 *   <tr><td>{@code kmem4jTrackedZeroOnAlloc}, {@code kmem4jExplicitZeroOnAlloc}</td><td>as above with
 *       {@code zeroOnFree=false}: memory is zeroed as it is allocated, not as it is released</td><td>as above</td></tr>
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
 * Every flavour hands out zero-filled memory except Netty's (its buffers are not zeroed). GC gives
 * back dropped buffers of {@code jdk}, {@code kmem4jAgent} and {@code kmem4jTracked} only
 * ({@link #reclaimedByGc()}): Netty's pooled and adaptive buffers have no cleaner (a dropped one is
 * a leak its leak detector reports), explicit kmem4j buffers have none by design, and
 * {@code unsafe} / {@code floor} memory is not owned by a buffer.
 */
abstract class Flavour implements AutoCloseable {
    /** All flavour names, in report order. */
    static final String[] NAMES = {
        "jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "kmem4jTrackedZeroOnAlloc", "kmem4jExplicitZeroOnAlloc",
        "nettyPooled", "nettyAdaptive", "kmem4jNetty", "unsafe", "floor"};
    /** The flavour that needs the agent in its fork ({@code Report} adds {@code -javaagent}). */
    static final String AGENT = "kmem4jAgent";
    /** Netty's pooled allocator in a fork whose agent serves Netty's buffers ({@code presets=netty-allocator}). */
    static final String NETTY_AGENT = "kmem4jNetty";
    /** The agent options of {@link #NETTY_AGENT}'s forks. */
    static final String NETTY_AGENT_OPTIONS = "presets=netty-allocator";
    /**
     * Flavours whose forks run with the agent ({@code Report} adds {@code -javaagent}): the agent
     * flavour, the tracked ones, whose cleaners the agent's rewrite keeps out of the JDK's list, and
     * {@link #NETTY_AGENT}, with its own options ({@link #agentOptions}).
     */
    static final java.util.Set<String> WITH_AGENT = java.util.Set.of(AGENT, "kmem4jTracked", "kmem4jTrackedZeroOnAlloc",
        NETTY_AGENT);

    /**
     * @param name a flavour name
     * @return the options of the agent its forks run with ({@code ""}: the defaults), or {@code null}
     *         when they run without the agent
     */
    static String agentOptions(final String name) {
        return name.equals(NETTY_AGENT) ? NETTY_AGENT_OPTIONS : WITH_AGENT.contains(name) ? "" : null;
    }

    /**
     * @param agentJar the agent jar
     * @param options  {@link #agentOptions} of the fork's allocators (not null)
     * @return the fork's {@code -javaagent} flag
     */
    static String javaagent(final java.nio.file.Path agentJar, final String options) {
        return "-javaagent:" + agentJar.toAbsolutePath().normalize() + (options.isEmpty() ? "" : "=" + options);
    }

    final String name;
    /** Bytes per buffer, or the largest size when a workload mixes sizes. */
    final int size;

    Flavour(final String name, final int size) {
        this.name = name;
        this.size = size;
    }

    /**
     * @param name    one of {@link #NAMES}
     * @param size    bytes per buffer (the largest, for a size mix)
     * @param threads benchmark threads that will each build a ring ({@link #newRing(int)})
     * @param slots   slots per ring
     * @return a new flavour; {@link #close()} it at the end of the trial
     * @throws IllegalArgumentException for an unknown name
     */
    static Flavour create(final String name, final int size, final int threads, final int slots) {
        switch (name) {
            case "jdk":
                return new Jdk(size);
            case AGENT:
                return new Agent(size);
            case "kmem4jTracked":
                return new Kmem4jTracked(name, size, true);
            case "kmem4jExplicit":
                return new Kmem4jExplicit(name, size, true);
            case "kmem4jTrackedZeroOnAlloc":
                return new Kmem4jTracked(name, size, false);
            case "kmem4jExplicitZeroOnAlloc":
                return new Kmem4jExplicit(name, size, false);
            case "nettyPooled":
                return new NettyPooled(size);
            case "nettyAdaptive":
                return new NettyAdaptive(size);
            case NETTY_AGENT:
                return new Kmem4jNetty(size);
            case "unsafe":
                return new RawUnsafe(size);
            case "floor":
                return new Floor(size, threads, slots);
            default:
                throw new IllegalArgumentException("unknown allocator '" + name + "', expected one of "
                    + String.join(", ", NAMES));
        }
    }

    /** @return a new buffer of {@code capacity} bytes (object flavours only). */
    abstract Object allocate(int capacity);

    /** Gives back a buffer from {@link #allocate(int)}, on any thread. */
    abstract void release(Object buffer);

    /** @return the native address of a buffer from {@link #allocate(int)}. */
    long address(final Object buffer) {
        return BufferUtil.address((ByteBuffer) buffer);
    }

    /** @return true when GC gives a dropped buffer's memory back (a JDK cleaner frees it). */
    boolean reclaimedByGc() {
        return false;
    }

    /**
     * @param slots ring slots
     * @return an empty ring for the calling thread; fill it on the thread that will use it
     */
    Ring newRing(final int slots) {
        return new Ring.Objects(this, slots);
    }

    /** @return off-heap bytes this allocator holds from the system now, or -1 when it cannot tell. */
    long reservedBytes() {
        return -1;
    }

    /** @return statistics worth reporting after a trial (after every buffer was released), or {@code null}. */
    String stats() {
        return null;
    }

    /** Prints {@link #stats()} on one line prefixed {@link Jvm#STATS_PREFIX}, for the report to pick up. */
    final void printStats(final BenchmarkParams params) {
        final String s = stats();
        if (s != null) {
            printStats(params, this, s);
        }
    }

    /**
     * Prints {@code kv} (space-separated {@code key=value}) on a {@link Jvm#STATS_PREFIX} line for this
     * trial, after the benchmark, thread count and every benchmark parameter.
     */
    static void printStats(final BenchmarkParams params, final Flavour f, final String kv) {
        final StringBuilder b = new StringBuilder(Jvm.STATS_PREFIX).append(" benchmark=").append(params.getBenchmark())
            .append(" threads=").append(params.getThreads());
        for (final String k : params.getParamsKeys()) {
            b.append(' ').append(k).append('=').append(params.getParam(k));
        }
        System.out.println(b.append(' ').append(kv));
        System.out.flush();
    }

    @Override
    public void close() {
    }

    /** @return direct memory the JDK's {@code java.nio.Bits} counts (the {@code direct} buffer pool), bytes. */
    static long jdkDirectMemoryUsed() {
        for (final BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if ("direct".equals(p.getName())) {
                return p.getMemoryUsed();
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------------ flavours

    /** {@code ByteBuffer.allocateDirect} + {@code Unsafe.invokeCleaner}. */
    static class Jdk extends Flavour {
        Jdk(final int size) {
            this("jdk", size);
        }

        Jdk(final String name, final int size) {
            super(name, size);
        }

        @Override
        final Object allocate(final int capacity) {
            return ByteBuffer.allocateDirect(capacity);
        }

        @Override
        final void release(final Object buffer) {
            invokeCleaner((ByteBuffer) buffer);
        }

        @Override
        final boolean reclaimedByGc() {
            return true;
        }

        @Override
        long reservedBytes() {
            return jdkDirectMemoryUsed();
        }
    }

    /**
     * The JDK's code path unchanged ({@code ByteBuffer.allocateDirect} + {@code Unsafe.invokeCleaner})
     * in a fork started with the kmem4j agent, which rewrote {@code allocateDirect}. Statistics come
     * from the agent's {@code kmem4j:type=Allocator} MXBean.
     */
    static final class Agent extends Jdk {
        private static final String BEAN = "kmem4j:type=Allocator";

        Agent(final int size) {
            super(AGENT, size);
            if (!agentInstalled()) {
                throw new IllegalStateException("allocator=" + AGENT + " needs a fork started with"
                    + " -javaagent:agent/target/kmem4j-agent.jar (benchmarks/run adds it; with JMH directly pass"
                    + " -jvmArgsPrepend -javaagent:agent/target/kmem4j-agent.jar)");
            }
            // The agent registers its beans on a thread of its own once the platform MBean server exists:
            // create it now, not at the end of a trial (where a GC-only trial sits at the direct-memory
            // limit and the beans would not be registered yet when the statistics are read).
            ManagementFactory.getPlatformMBeanServer();
        }

        /** @return true when {@code java.nio.Kmem4jBridge.allocator} is set (the agent serves allocateDirect). */
        static boolean agentInstalled() {
            try {
                final Class<?> bridge = Class.forName("java.nio.Kmem4jBridge", false, null);
                return bridge.getField("allocator").get(null) != null;
            } catch (final ReflectiveOperationException | RuntimeException | LinkageError e) {
                return false;
            }
        }

        private static Object attribute(final String name) throws Exception {
            final MBeanServer s = ManagementFactory.getPlatformMBeanServer();
            return s.getAttribute(new ObjectName(BEAN), name);
        }

        @Override
        long reservedBytes() {
            try {
                final Object v = attribute("BytesReserved");
                return v instanceof Number ? ((Number) v).longValue() : -1;
            } catch (final Exception e) {
                return -1;
            }
        }

        @Override
        String stats() {
            final Object hit;
            try {
                hit = attribute("MagazineHitRate");
                if (!(hit instanceof Number)) {
                    return "agentStats=unavailable(MagazineHitRate=" + hit + ")";
                }
                return String.format(Locale.ROOT,
                    "magazineHitRate=%.5f addressOrderScore=- allocations=%s fallbacks=%s remoteFreesSent=%s"
                        + " liveBuffers=%s chunks=%s", ((Number) hit).doubleValue(), attribute("Allocations"),
                    attribute("Fallbacks"), attribute("RemoteFreesSent"), attribute("LiveBuffers"), attribute("Chunks"));
            } catch (final Exception | Error e) {
                return "agentStats=unavailable(" + e.toString().replace(' ', '_') + ")";
            }
        }
    }

    /**
     * Base of the kmem4j core-API flavours: one {@link SlabAllocator} per trial with the default
     * configuration ({@code zeroOnFree=true}); the *ZeroOnAlloc names set {@code zeroOnFree=false}.
     */
    abstract static class Kmem4j extends Flavour {
        final SlabAllocator allocator;

        Kmem4j(final String name, final int size, final boolean zeroOnFree) {
            super(name, size);
            this.allocator = new SlabAllocator(SlabAllocatorConfig.builder().zeroOnFree(zeroOnFree).build());
        }

        @Override
        long reservedBytes() {
            return allocator.stats().bytesReserved();
        }

        @Override
        String stats() {
            final AllocatorStats s = allocator.stats();
            final CacheStats c = s.caches().stream()
                .max(Comparator.comparingLong(CacheStats::allocations)).orElse(null);
            return String.format(Locale.ROOT,
                "magazineHitRate=%.5f addressOrderScore=%.3f cache=%s allocations=%d fallbacks=%d"
                    + " remoteFreesSent=%d doubleFrees=%d liveBuffers=%d chunks=%d zeroOnFree=%b ownedLifecycle=%b",
                s.magazineHitRate(), c == null ? 0.0 : c.addressOrderScore(), c == null ? "-" : c.name(),
                s.allocations(), s.fallbacks(), s.remoteFreesSent(), s.doubleFrees(), s.liveBuffers(), s.chunks(),
                allocator.config().zeroOnFree(), OwnedLifecycle.enabled());
        }

        @Override
        public void close() {
            allocator.close();
        }
    }

    /** {@code SlabAllocator.allocate} (buffer with a JDK cleaner) + {@code Unsafe.invokeCleaner}. */
    static final class Kmem4jTracked extends Kmem4j {
        Kmem4jTracked(final String name, final int size, final boolean zeroOnFree) {
            super(name, size, adoptOwnedLifecycle(zeroOnFree));
        }

        /**
         * The fork runs with the agent (Report adds {@code -javaagent}), which rewrote the JDK cleaner's
         * {@code clean()} for its mark when it built its allocator (at the first direct allocation, made here): this copy of the allocator builds its cleaners with that mark,
         * outside the JDK's list, as the agent's own do ({@code OwnedLifecycle}).
         */
        private static boolean adoptOwnedLifecycle(final boolean zeroOnFree) {
            try {
                // the agent builds its allocator, and with it the rewrite and the mark, at the first direct allocation
                ByteBuffer.allocateDirect(1);
                final Object mark = Class.forName("java.nio.Kmem4jBridge", false, null).getField("cleanerMark").get(null);
                if (mark != null && !OwnedLifecycle.enabled()) {
                    OwnedLifecycle.enable(mark);
                }
            } catch (final IllegalStateException | IllegalArgumentException e) {
                // the agent is there but this copy cannot build its cleaners: say so, the figures would mislead
                System.err.println("[bench] kmem4jTracked: cleaners in the JDK's list: " + e.getMessage());
            } catch (final ReflectiveOperationException | RuntimeException noAgent) {
                // without the agent: cleaners in the JDK's list
            }
            return zeroOnFree;
        }

        @Override
        Object allocate(final int capacity) {
            return allocator.allocate(capacity);
        }

        @Override
        void release(final Object buffer) {
            invokeCleaner((ByteBuffer) buffer);
        }

        @Override
        boolean reclaimedByGc() {
            return true;
        }
    }

    /** {@code SlabAllocator.allocateExplicit} (no cleaner) + {@code SlabAllocator.free}. */
    static final class Kmem4jExplicit extends Kmem4j {
        Kmem4jExplicit(final String name, final int size, final boolean zeroOnFree) {
            super(name, size, zeroOnFree);
        }

        @Override
        Object allocate(final int capacity) {
            return allocator.allocateExplicit(capacity);
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
        final void release(final Object buffer) {
            ((ByteBuf) buffer).release();
        }

        @Override
        final long address(final Object buffer) {
            return ((ByteBuf) buffer).memoryAddress();
        }
    }

    /** {@code PooledByteBufAllocator.DEFAULT.directBuffer(size, size)} + {@code release()}, Netty's defaults. */
    static class NettyPooled extends Netty {
        final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

        NettyPooled(final int size) {
            this("nettyPooled", size);
        }

        NettyPooled(final String name, final int size) {
            super(name, size);
        }

        @Override
        Object allocate(final int capacity) {
            return alloc.directBuffer(capacity, capacity);
        }

        @Override
        long reservedBytes() {
            return alloc.metric().usedDirectMemory();
        }

        @Override
        String stats() {
            return "useCacheForAllThreads=" + PooledByteBufAllocator.defaultUseCacheForAllThreads()
                + " directArenas=" + PooledByteBufAllocator.defaultNumDirectArena()
                + " usedDirectMemory=" + alloc.metric().usedDirectMemory();
        }
    }

    /**
     * The code of {@link NettyPooled}, in a fork whose agent serves Netty's direct buffers
     * ({@value #NETTY_AGENT_OPTIONS}): kmem4j's blocks under Netty's {@code ByteBuf}s, released buffers
     * kept per thread for reuse. What kmem4j does for a Netty server's allocations, without the server.
     *
     * @throws IllegalStateException at construction when the buffers are not kmem4j's (no agent in the
     *         fork, or the agent left Netty alone): the figures would be Netty's own
     */
    static final class Kmem4jNetty extends NettyPooled {
        Kmem4jNetty(final int size) {
            super(NETTY_AGENT, size);
            // on a thread of its own: the thread that allocates a Netty buffer first keeps released ones for
            // reuse, and in producer/consumer the set-up may run on either benchmark thread
            final String[] served = new String[1];
            final Thread probe = new Thread(() -> {
                final ByteBuf b = alloc.directBuffer(size, size);
                try {
                    served[0] = (b.unwrap() != null ? b.unwrap() : b).getClass().getName();
                } finally {
                    b.release();
                }
            }, "kmem4jNetty-probe");
            probe.start();
            try {
                probe.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("allocator=" + NETTY_AGENT + ": interrupted", e);
            }
            if (served[0] == null || !served[0].substring(served[0].lastIndexOf('.') + 1).startsWith("Kmem4j")) {
                throw new IllegalStateException("allocator=" + NETTY_AGENT + ": Netty's buffer of " + size
                    + " bytes is " + (served[0] == null ? "not there (the probe failed, see above)" : "its own " + served[0])
                    + ", not kmem4j's: run the fork with -javaagent:<kmem4j agent jar>="
                    + NETTY_AGENT_OPTIONS + " (kmem4j serves Netty's buffers up to nettyMaxSizeClassBytes, 256 KiB by default)");
            }
            ManagementFactory.getPlatformMBeanServer(); // the agent registers its beans once it exists (see Agent)
        }

        /** @return the agent's {@code kmem4j:type=Netty} figures: buffers served, of them reused, left to Netty */
        @Override
        String stats() {
            try {
                final MBeanServer s = ManagementFactory.getPlatformMBeanServer();
                final StringBuilder b = new StringBuilder();
                for (final ObjectName n : s.queryNames(new ObjectName("kmem4j:type=Netty,*"), null)) {
                    b.append(b.length() == 0 ? "" : " ").append("buffers=").append(s.getAttribute(n, "Buffers"))
                        .append(" buffersReused=").append(s.getAttribute(n, "BuffersReused"))
                        .append(" buffersPassed=").append(s.getAttribute(n, "BuffersPassed"));
                }
                return b.length() == 0 ? "agentStats=unavailable(no kmem4j:type=Netty bean)" : b.toString();
            } catch (final Exception | Error e) {
                return "agentStats=unavailable(" + e.toString().replace(' ', '_') + ")";
            }
        }
    }

    /** {@code AdaptiveByteBufAllocator.directBuffer(size, size)} + {@code release()}, Netty's defaults. */
    static final class NettyAdaptive extends Netty {
        private final AdaptiveByteBufAllocator alloc = new AdaptiveByteBufAllocator();

        NettyAdaptive(final int size) {
            super("nettyAdaptive", size);
        }

        @Override
        Object allocate(final int capacity) {
            return alloc.directBuffer(capacity, capacity);
        }

        @Override
        long reservedBytes() {
            return alloc.usedDirectMemory();
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
        Object allocate(final int capacity) {
            throw new UnsupportedOperationException("allocator=unsafe has no buffer objects: ring workloads only");
        }

        @Override
        void release(final Object buffer) {
            throw new UnsupportedOperationException("allocator=unsafe has no buffer objects: ring workloads only");
        }

        @Override
        Ring newRing(final int slots) {
            return new Ring.Addresses(slots);
        }
    }
}
