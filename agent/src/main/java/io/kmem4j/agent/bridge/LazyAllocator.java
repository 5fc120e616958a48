package io.kmem4j.agent.bridge;

import java.lang.instrument.Instrumentation;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 * every later one. A program that never allocates a direct buffer pays none of it (some 40 ms of CPU
 * measured, and 40 classes, at start-up); the first allocation pays it once, on its own thread. The beans'
 * registration (when the platform MBean server is created) builds it too ({@link #interceptor()}).
 *
 * <p>Threads: any. One build at a time, on a thread of its own ({@code kmem4j-init}), holding no
 * lock while it runs (it retransforms a JDK class, which runs other agents' transformers, loads
 * classes and may log): the threads that ask wait for it at most {@link #WAIT_MILLIS} and then get
 * the JDK's allocation, so a build that needs a lock a waiting thread holds cannot deadlock, and once
 * a wait has run out, later requests during that build do not wait at all. A build that throws leaves
 * interception off for good (one ERROR line; the JVM-wide state, the bean and the summary say why),
 * except for a {@link VirtualMachineError} (no memory or thread at that moment), after which a later
 * request tries again, {@link #ATTEMPTS} times at most.
 */
public final class LazyAllocator implements IntFunction<Object> {
    /** How long a thread waits for a build under way before the JDK allocates for it, ms. */
    public static final long WAIT_MILLIS = 1000;
    /** Builds tried at most when each ends in a {@link VirtualMachineError}. */
    static final int ATTEMPTS = 3;

    private final SlabAllocatorConfig config;
    private final boolean ownedLifecycle;
    private final Instrumentation inst;
    private final BootstrapBridge.Members bridge;
    private final Consumer<String> onFailure;
    private final Function<SlabAllocatorConfig, SlabAllocator> factory;
    private final long waitNanos;
    /** The capacities the slabs serve, bytes: a request outside them does not build the allocator. */
    private final int minCapacity;
    private final int maxCapacity;
    private volatile Interceptor interceptor;
    private volatile String failure;
    private volatile boolean stopped;
    /** The latch of the build under way (null: none), under this object's monitor (never held long). */
    private CountDownLatch built;
    /** A wait for the build under way ran out: later requests during it do not wait again. */
    private volatile boolean slow;
    private int attempts;

    /**
     * @param config         the allocator's configuration
     * @param ownedLifecycle switch the owned lifecycle on before the first buffer ({@code ownedLifecycle} key)
     * @param inst           the JVM's instrumentation (the owned lifecycle retransforms the JDK's cleaner)
     * @param bridge         the bridge, whose {@code allocator} field holds this object until the build
     * @param onFailure      told why, once, when a build fails for good (the agent's JVM-wide state)
     */
    public LazyAllocator(final SlabAllocatorConfig config, final boolean ownedLifecycle, final Instrumentation inst,
                         final BootstrapBridge.Members bridge, final Consumer<String> onFailure) {
        this(config, ownedLifecycle, inst, bridge, onFailure, null, WAIT_MILLIS);
    }

    /** With the allocator's constructor (tests make it fail, block or allocate; {@code null}: the real one) and the wait. */
    LazyAllocator(final SlabAllocatorConfig config, final boolean ownedLifecycle, final Instrumentation inst,
                  final BootstrapBridge.Members bridge, final Consumer<String> onFailure,
                  final Function<SlabAllocatorConfig, SlabAllocator> factory, final long waitMillis) {
        this.config = config;
        this.ownedLifecycle = ownedLifecycle;
        this.inst = inst;
        this.bridge = bridge;
        this.onFailure = onFailure;
        this.factory = factory;
        this.waitNanos = TimeUnit.MILLISECONDS.toNanos(waitMillis);
        this.minCapacity = config.minCapacityBytes();
        this.maxCapacity = SlabAllocator.maxCapacity(config);
    }

    /**
     * The bridge's delegate until the allocator exists: builds it and serves the request as the
     * {@link Interceptor} would; {@code null} lets the JDK allocate. A request of a size the slabs do
     * not serve goes to the JDK without a build (a program that only allocates large buffers pays
     * nothing; such requests are not counted as fallbacks until the allocator exists). Never throws.
     */
    @Override
    public Object apply(final int capacity) {
        if (Thread.currentThread() instanceof AgentThread) {
            return AgentBuffers.allocate(capacity); // the agent's own threads never need the slabs
        }
        if ((capacity < minCapacity || capacity > maxCapacity) && interceptor == null) {
            return null; // the slabs would not serve it: the JDK allocates, nothing is built
        }
        try {
            final Interceptor i = interceptor();
            return i == null ? null : i.apply(capacity);
        } catch (final Throwable t) {
            return null; // e.g. no stack left on this thread: the JDK allocates
        }
    }

    /**
     * @return the interceptor, building the allocator first if need be; {@code null} when that failed
     *         or did not end within {@link #WAIT_MILLIS}
     */
    public Interceptor interceptor() {
        final Interceptor i = interceptor;
        return i != null ? i : build();
    }

    /** @return the allocator, building it first if need be (JMX); {@code null} as {@link #interceptor()} */
    public SlabAllocator allocator() {
        final Interceptor i = interceptor();
        return i == null ? null : i.allocator();
    }

    /** @return the allocator if it was built, else {@code null}; never builds (statistics, shutdown) */
    public SlabAllocator existing() {
        final Interceptor i = interceptor;
        return i == null ? null : i.allocator();
    }

    /** @return why the build failed for good (interception is off), or {@code null} */
    public String failure() {
        return failure;
    }

    /** @return true once {@link #stop()} ran */
    public boolean stopped() {
        return stopped;
    }

    /**
     * Takes kmem4j out of the bridge for good (shutdown, or a failed start): later allocations go to
     * the JDK, and no build starts any more. Takes no lock (a build under way puts its interceptor in
     * the bridge, sees the stop and takes it out again).
     *
     * @return true when kmem4j was in the bridge (this object or its interceptor) and is now out
     */
    public boolean stop() {
        stopped = true;
        final Object present = bridge.allocator.get();
        if (present != null && (present == this || present == interceptor)) {
            bridge.allocator.set(null);
            return true;
        }
        return false;
    }

    /**
     * Builds the allocator now (premain, when buffer pools are routed to kmem4j: their releases must
     * know kmem4j's buffers from the first call). Called before this object is in the bridge.
     *
     * @return the interceptor
     * @throws Exception whatever the build threw (nothing is logged here; the caller reports it)
     */
    public Interceptor buildNow() throws Exception {
        Interceptor i = interceptor;
        if (i == null) {
            i = start();
            interceptor = i;
        }
        return i;
    }

    private Interceptor build() {
        final CountDownLatch wait;
        synchronized (this) {
            if (interceptor != null || failure != null || stopped) {
                return interceptor;
            }
            if (built == null) {
                final CountDownLatch latch = new CountDownLatch(1);
                if (!startBuilder(latch)) {
                    return null; // no thread could be made now (counted as an attempt): the JDK allocates
                }
                built = latch;
                slow = false;
            } else if (slow) {
                return null; // the build under way is slow: the JDK allocates without waiting again
            }
            wait = built;
        }
        try {
            if (!wait.await(waitNanos, TimeUnit.NANOSECONDS)) {
                slow = true;
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt(); // keep the application's interrupt; the JDK allocates this one
        }
        return interceptor;
    }

    /**
     * Starts the build on a thread of its own ({@code kmem4j-init}, an {@link AgentThread}): the asking
     * thread's stack depth, locks and interrupt status play no part in it, and nothing of that thread is
     * kept by what the build starts (on 17 a new thread inherits its creator's access-control context,
     * which holds the class loaders of every class on its stack: the {@code doPrivileged} leaves only
     * kmem4j's). Under this object's monitor.
     *
     * @return false when the thread could not be started (counted as an attempt)
     */
    @SuppressWarnings("removal") // AccessController: still what decides a new thread's inherited context on 17-23
    private boolean startBuilder(final CountDownLatch latch) {
        try {
            final Thread builder = java.security.AccessController.doPrivileged(
                new java.security.PrivilegedAction<Thread>() {
                    @Override
                    public Thread run() {
                        final Thread t = new AgentThread("kmem4j-init", new Runnable() {
                            @Override
                            public void run() {
                                runBuild(latch);
                            }
                        });
                        t.setContextClassLoader(null);
                        return t;
                    }
                });
            builder.start();
            return true;
        } catch (final Throwable t) {
            if (++attempts >= ATTEMPTS) {
                failure = t.getMessage() != null ? t.getMessage() : t.toString();
                off(failure);
            }
            return false;
        }
    }

    /** On the builder thread: builds, publishes the result (or the failure), wakes the waiters. */
    private void runBuild(final CountDownLatch latch) {
        Interceptor result = null;
        Throwable error = null;
        try {
            result = start();
        } catch (final Throwable t) {
            error = t;
        }
        final String failed;
        synchronized (this) {
            built = null;
            if (result != null) {
                interceptor = result;
            } else if (!(error instanceof VirtualMachineError) || ++attempts >= ATTEMPTS) {
                failure = error.getMessage() != null ? error.getMessage() : error.toString();
            }
            failed = result == null ? failure : null;
        }
        try {
            if (result != null) {
                swapInto(result);
            } else if (failed != null) {
                off(failed);
            }
        } finally {
            latch.countDown();
        }
    }

    /** The bridge calls the interceptor from now on, unless kmem4j was stopped meanwhile. */
    private void swapInto(final Interceptor result) {
        if (bridge.allocator.get() == this) {
            bridge.allocator.set(result);
        }
        if (stopped && bridge.allocator.get() == result) {
            bridge.allocator.set(null); // stop() ran while the interceptor was not yet in the bridge
        }
    }

    /** A build failed for good: the JDK allocates from now on; the state, one ERROR line. Never throws. */
    private void off(final String why) {
        try {
            if (bridge.allocator.get() == this) {
                bridge.allocator.set(null);
            }
        } catch (final Throwable ignored) {
            // apply() answers null from now on anyway
        }
        try {
            onFailure.accept(why);
        } catch (final Throwable ignored) {
            // the state is a courtesy to later loads
        }
        try {
            AgentLog.get(LazyAllocator.class).error("kmem4j is disabled, the application runs on the JDK's"
                + " allocator: building the allocator failed: {}", why);
        } catch (final Throwable logFailed) {
            try {
                System.err.println("[kmem4j] ERROR kmem4j is disabled: building the allocator failed: " + why);
            } catch (final Throwable ignored) {
                // nothing may reach the application
            }
        }
    }

    /** The owned lifecycle (when configured), then the allocator and its interceptor; logs after, never failing for it. */
    private Interceptor start() {
        final long begin = System.nanoTime();
        final String notOwned = ownedLifecycle ? OwnedLifecycleInstaller.install(inst, bridge) : "ownedLifecycle=false";
        final SlabAllocator allocator = factory == null ? new SlabAllocator(config) : factory.apply(config);
        NativeHeapTrim.watchForAgent(allocator);
        final Interceptor result = new Interceptor(allocator);
        try {
            if (notOwned != null && ownedLifecycle) {
                AgentLog.get(LazyAllocator.class).warn("tracked buffers keep the JDK's cleaner list (its global lock): {}",
                    notOwned);
            }
            AgentLog.get(LazyAllocator.class).debug("allocator built in {} ms{}", (System.nanoTime() - begin) / 1_000_000,
                notOwned == null ? ", cleaners outside the JDK's list" : "");
        } catch (final Throwable ignored) {
            // the allocator is built; a log line that failed changes nothing
        }
        return result;
    }
}
