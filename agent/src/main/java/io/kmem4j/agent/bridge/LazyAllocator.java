package io.kmem4j.agent.bridge;

import java.lang.instrument.Instrumentation;
import java.util.function.Function;
import java.util.function.IntFunction;

import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;

/**
 * kmem4j's allocator, built when the first direct buffer is asked for, not in premain. Premain puts
 * this object into {@code java.nio.Kmem4jBridge.allocator}, so interception is in place before
 * {@code main} as always; the first {@code ByteBuffer.allocateDirect} of an application thread then
 * switches the owned lifecycle on ({@link OwnedLifecycleInstaller}), builds the {@link SlabAllocator}
 * and replaces this object in the bridge by the {@link Interceptor}, which serves that request and
 * every later one. A program that never allocates a direct buffer pays none of it (some 60 ms of CPU
 * and 40 classes at start-up); the first allocation pays it once, on its own thread.
 *
 * <p>Threads: any. The build runs once, under this object's monitor: threads that ask while it runs
 * wait for it (tens of milliseconds, once per JVM); a direct allocation made by the building thread
 * itself while it builds, and every allocation after a failed build, goes to the JDK. A failed build
 * leaves interception off for good: one ERROR line, and the bean and the summary say why.
 */
public final class LazyAllocator implements IntFunction<Object> {
    private final SlabAllocatorConfig config;
    private final boolean ownedLifecycle;
    private final Instrumentation inst;
    private final BootstrapBridge.Members bridge;
    private final Function<SlabAllocatorConfig, SlabAllocator> factory;
    private volatile Interceptor interceptor;
    private volatile String failure;
    private volatile boolean stopped;
    private Thread builder;

    /**
     * @param config         the allocator's configuration
     * @param ownedLifecycle switch the owned lifecycle on before the first buffer ({@code ownedLifecycle} key)
     * @param inst           the JVM's instrumentation (the owned lifecycle retransforms the JDK's cleaner)
     * @param bridge         the bridge, whose {@code allocator} field holds this object until the build
     */
    public LazyAllocator(final SlabAllocatorConfig config, final boolean ownedLifecycle, final Instrumentation inst,
                         final BootstrapBridge.Members bridge) {
        this(config, ownedLifecycle, inst, bridge, null);
    }

    /** With the allocator's constructor given (tests make it fail or allocate while it builds); {@code null}: the real one. */
    LazyAllocator(final SlabAllocatorConfig config, final boolean ownedLifecycle, final Instrumentation inst,
                  final BootstrapBridge.Members bridge, final Function<SlabAllocatorConfig, SlabAllocator> factory) {
        this.config = config;
        this.ownedLifecycle = ownedLifecycle;
        this.inst = inst;
        this.bridge = bridge;
        this.factory = factory;
    }

    /**
     * The bridge's delegate until the allocator exists: builds it and serves the request as the
     * {@link Interceptor} would; {@code null} lets the JDK allocate.
     */
    @Override
    public Object apply(final int capacity) {
        if (Thread.currentThread() instanceof AgentThread) {
            return AgentBuffers.allocate(capacity); // the agent's own threads never need the slabs
        }
        final Interceptor i = interceptor();
        return i == null ? null : i.apply(capacity);
    }

    /** @return the interceptor, building the allocator first if need be; {@code null} when that failed or is under way on this thread */
    public Interceptor interceptor() {
        final Interceptor i = interceptor;
        return i != null ? i : build();
    }

    /** @return the allocator, building it first if need be (JMX); {@code null} when that failed */
    public SlabAllocator allocator() {
        final Interceptor i = interceptor();
        return i == null ? null : i.allocator();
    }

    /** @return the allocator if it was built, else {@code null}; never builds (statistics, shutdown) */
    public SlabAllocator existing() {
        final Interceptor i = interceptor;
        return i == null ? null : i.allocator();
    }

    /** @return why the build failed (interception is off), or {@code null} */
    public String failure() {
        return failure;
    }

    /**
     * Takes kmem4j out of the bridge for good (shutdown, or a failed start): later allocations go to
     * the JDK, and no build starts any more.
     *
     * @return true when kmem4j was in the bridge (this object or its interceptor) and is now out
     */
    public synchronized boolean stop() {
        stopped = true;
        try {
            final Object present = bridge.allocator.get(null);
            if (present != null && (present == this || present == interceptor)) {
                bridge.allocator.set(null, null);
                return true;
            }
        } catch (final IllegalAccessException impossible) {
            // a public field of a public class
        }
        return false;
    }

    /**
     * Builds the allocator now (premain, when buffer pools are routed to kmem4j: their releases must
     * know kmem4j's buffers from the first call).
     *
     * @return the interceptor
     * @throws Exception whatever the build threw (nothing is logged here; the caller reports it)
     */
    public synchronized Interceptor buildNow() throws Exception {
        if (interceptor == null) {
            interceptor = start();
        }
        return interceptor;
    }

    private synchronized Interceptor build() {
        if (interceptor != null || failure != null || stopped || builder == Thread.currentThread()) {
            return interceptor;
        }
        builder = Thread.currentThread();
        try {
            final Interceptor built = start();
            interceptor = built;
            if (bridge.allocator.get(null) == this) {
                bridge.allocator.set(null, built);
            }
            return built;
        } catch (final Throwable t) {
            failure = t.getMessage() != null ? t.getMessage() : t.toString();
            try {
                if (bridge.allocator.get(null) == this) {
                    bridge.allocator.set(null, null);
                }
            } catch (final Throwable ignored) {
                // apply() answers null from now on anyway
            }
            try {
                AgentLog.get(LazyAllocator.class).error("kmem4j is disabled, the application runs on the JDK's"
                    + " allocator: building the allocator at the first direct allocation failed: {}", failure);
            } catch (final Throwable ignored) {
                System.err.println("[kmem4j] ERROR kmem4j is disabled: " + failure);
            }
            return null;
        } finally {
            builder = null;
        }
    }

    /** The owned lifecycle (when configured), then the allocator and its interceptor. */
    private Interceptor start() {
        final long begin = System.nanoTime();
        final String notOwned = ownedLifecycle ? OwnedLifecycleInstaller.install(inst, bridge) : "ownedLifecycle=false";
        if (notOwned != null && ownedLifecycle) {
            AgentLog.get(LazyAllocator.class).warn("tracked buffers keep the JDK's cleaner list (its global lock): {}",
                notOwned);
        }
        final Interceptor built = new Interceptor(factory == null ? new SlabAllocator(config) : factory.apply(config));
        AgentLog.get(LazyAllocator.class).debug("allocator built in {} ms{}", (System.nanoTime() - begin) / 1_000_000,
            notOwned == null ? ", cleaners outside the JDK's list" : "");
        return built;
    }
}
