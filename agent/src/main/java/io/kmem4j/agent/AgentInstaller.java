package io.kmem4j.agent;

import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;

import io.kmem4j.agent.bridge.AgentThread;
import io.kmem4j.agent.bridge.BootstrapBridge;
import io.kmem4j.agent.bridge.BridgeField;
import io.kmem4j.agent.bridge.AllocateDirectRewrite;
import io.kmem4j.agent.bridge.Interceptor;
import io.kmem4j.agent.bridge.LazyAllocator;
import io.kmem4j.agent.bridge.PlatformBufferPool;
import io.kmem4j.agent.config.AgentConfig;
import io.kmem4j.agent.config.AgentVersion;
import io.kmem4j.agent.jmx.AllocatorView;
import io.kmem4j.agent.jmx.Kmem4jBufferPool;
import io.kmem4j.agent.jmx.Kmem4jMBeans;
import io.kmem4j.agent.jmx.StatsSnapshots;
import io.kmem4j.agent.jmx.PoolsView;
import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.agent.jmx.NettyView;
import io.kmem4j.agent.netty.NettyBuffers;
import io.kmem4j.agent.netty.NettyTransformer;
import io.kmem4j.agent.pool.PoolRouter;
import io.kmem4j.agent.pool.PoolTransformer;
import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.UnsupportedJdkException;
import org.slf4j.Logger;

/**
 * Installs kmem4j into a running JVM, in this order, so that a failure at any step leaves the
 * application on the JDK's allocator:
 * <ol>
 *   <li>open {@code java.nio}, {@code jdk.internal.misc}, {@code jdk.internal.access} (and on 17-25 {@code jdk.internal.ref}) to the agent's module only
 *       ({@code Instrumentation.redefineModule}; no command-line flag);</li>
 *   <li>read and validate the configuration ({@link AgentConfig}; the default chunk size follows
 *       {@code -XX:MaxDirectMemorySize}, read through {@code jdk.internal.misc});</li>
 *   <li>define {@code java.nio.Kmem4jBridge}, probe the JDK's internals ({@link SlabAllocator#checkJdk()}
 *       refuses an unknown shape) and point the bridge at a {@link LazyAllocator}, which builds the
 *       {@link SlabAllocator} at the first direct allocation;</li>
 *   <li>retransform {@code java.nio.ByteBuffer.allocateDirect} to call the bridge, which asks the allocator first
 *       ({@link AllocateDirectRewrite}, no bytecode library);</li>
 *   <li>with {@code presets}, {@code pools} or {@code excludeCallers}: point the bridge's pool fields at a
 *       {@link PoolRouter} and install the {@link PoolTransformer} (which retransforms the pools' and the
 *       excluded classes already loaded);</li>
 *   <li>add the {@code kmem4j} pool to the platform's buffer pools ({@link PlatformBufferPool});</li>
 *   <li>a shutdown hook that detaches the allocator; the MXBeans are registered (on a daemon thread) when
 *       the platform MBean server is created, or one second after a dynamic attach.</li>
 * </ol>
 */
public final class AgentInstaller {

    private AgentInstaller() {
    }

    /**
     * The JDKs the integration tests run this agent on (README, "Supported JDKs"); named in the
     * warning when interception is off.
     */
    static final String TESTED_JDKS = "17, 21, 25, 26 and 27";

    /**
     * Installs kmem4j; never throws. Called by {@link AgentEntry}, in the agent's
     * private class loader. When the configuration is invalid nothing is installed (one ERROR line).
     * When interception cannot start (this JDK does not match, or any failure while installing) the
     * application runs on the JDK's allocator and kmem4j says so everywhere: one WARN (or ERROR)
     * line naming the JDK and what did not match, {@code kmem4j:type=Allocator} with
     * {@code Enabled=false} and {@code DisabledReason}, and with {@code summary=true} one summary
     * line at exit.
     *
     * @param args    agent arguments ({@code key=value,...}), may be null
     * @param inst    the JVM's instrumentation
     * @param dynamic true for a dynamic attach
     */
    public static void installSafely(final String args, final Instrumentation inst, final boolean dynamic) {
        final String earlier = System.getProperty(STATE_PROPERTY);
        if (earlier != null) {
            // an earlier load that is not serving (off, or enabled=false) stays what it is: its bean and its
            // summary tell the truth; serving loads are told apart in install() by the bridge
            System.err.println("[kmem4j] INFO kmem4j was already loaded into this JVM and is " + earlier + "; this "
                + (dynamic ? "attach" : "agent") + " changes nothing");
            return;
        }
        final AgentConfig config;
        try {
            openJavaBase(inst); // first: the configuration's defaults read the direct-memory limit (jdk.internal.misc)
            config = configure(args);
        } catch (final Throwable t) {
            error("kmem4j is disabled, the application runs on the JDK's allocator: " + describe(t));
            markState("off (" + describe(t) + ")");
            if (AgentConfig.summaryRequested(args, System.getProperties(), System.getenv())) {
                summaryAtExit(describe(t));
            }
            registerDisabled(describe(t), Map.of());
            return;
        }
        if (config == null) {
            markState(DISABLED_STATE + " (enabled=false)");
            if (AgentConfig.summaryRequested(args, System.getProperties(), System.getenv())) {
                summaryAtExit("enabled=false"); // asked for: say why there are no figures (trial finding)
            }
            return; // enabled=false
        }
        try {
            install(config, inst, dynamic);
        } catch (final UnsupportedJdkException e) {
            off(config, e.getMessage(), "interception is off, the application runs on the JDK's allocator: "
                + e.getMessage() + "; kmem4j " + AgentVersion.get() + " is tested on JDK " + TESTED_JDKS
                + "; no flag or option turns it on here: run it on one of those JDKs or on a kmem4j release"
                + " that supports this JDK (README, Supported JDKs)", false);
        } catch (final Throwable t) {
            off(config, describe(t), "kmem4j is disabled, the application runs on the JDK's allocator: "
                + describe(t), true);
        }
    }

    /**
     * The JVM-wide record of a load that is not serving, read by any later load (another copy of the agent
     * has its own classes, so it must be a system property). Not a {@code kmem4j.*} name: those are settings.
     */
    public static final String STATE_PROPERTY = "io.kmem4j.agent.state";
    /** How {@link #STATE_PROPERTY} begins after a load with {@code enabled=false}. */
    public static final String DISABLED_STATE = "disabled";
    /**
     * Set when a load serves ({@code "<version> (premain|attached)"}): read by {@code attach} from the
     * target's system properties, so that attaching to a JVM that already runs kmem4j loads nothing.
     */
    public static final String SERVING_PROPERTY = "io.kmem4j.agent.serving";

    private static void markState(final String state) {
        setProperty(STATE_PROPERTY, state);
    }

    private static void setProperty(final String key, final String value) {
        try {
            System.setProperty(key, value);
        } catch (final Throwable ignored) {
            // a security manager may refuse: then a later load decides by itself
        }
    }

    private static String describe(final Throwable t) {
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    private static void warn(final String message) {
        try {
            AgentLog.get(AgentInstaller.class).warn(message);
        } catch (final Throwable ignored) {
            System.err.println("[kmem4j] WARN " + message);
        }
    }

    private static void error(final String message) {
        try {
            AgentLog.get(AgentInstaller.class).error(message);
        } catch (final Throwable ignored) {
            System.err.println("[kmem4j] ERROR " + message);
        }
    }

    /**
     * Interception is off: one log line, the {@code Enabled=false} bean, the summary line. Never throws.
     *
     * @param config the configuration
     * @param reason why, for the bean and the summary
     * @param line   the WARN or ERROR line
     * @param failed true for an ERROR (something failed), false for a WARN (this JDK does not match)
     */
    private static void off(final AgentConfig config, final String reason, final String line, final boolean failed) {
        markState("off (" + reason + ")");
        if (failed) {
            error(line);
        } else {
            warn(line);
        }
        if (config.summary) {
            summaryAtExit(reason);
        }
        registerDisabled(reason, config.effective);
    }

    /** With {@code summary=true}, interception off: one summary line at exit saying so. Never throws. */
    private static void summaryAtExit(final String reason) {
        try {
            Runtime.getRuntime().addShutdownHook(new AgentThread("kmem4j-shutdown", () -> {
                System.err.println(Summary.off(reason));
                System.err.flush();
            }));
        } catch (final Throwable ignored) {
            // the start line said it all; nothing may disturb the application
        }
    }

    /** {@code kmem4j:type=Allocator} with {@code Enabled=false}, on a daemon thread as the serving beans. Never throws. */
    private static void registerDisabled(final String reason, final Map<String, String> configuration) {
        try {
            new AgentThread("kmem4j-jmx", () -> {
                final Kmem4jMBeans.Registration r = Kmem4jMBeans.registerDisabled(
                    ManagementFactory.getPlatformMBeanServer(), reason, configuration);
                for (final String problem : r.problems()) {
                    warn("JMX: " + problem);
                }
            }).start();
        } catch (final Throwable ignored) {
            // nothing may disturb the application
        }
    }

    /**
     * Reads the configuration and sets up the agent's log.
     *
     * @return the configuration, or {@code null} when {@code enabled=false} (one INFO line)
     * @throws IllegalArgumentException for an invalid setting
     */
    private static AgentConfig configure(final String args) {
        // ByteBuddy must not touch sun.misc.Unsafe on JDK 25 (the property name is relocated with ByteBuddy)
        System.setProperty("net.bytebuddy.safe", "true");
        final AgentConfig config;
        try {
            config = AgentConfig.load(args);
        } catch (final IllegalArgumentException e) {
            AgentLog.configure("info");
            throw e;
        }
        AgentLog.configure(config.logLevel);
        final Logger log = AgentLog.get(AgentInstaller.class);
        log.debug("effective configuration: {}", config.effective);
        if (!config.unknownSystemProperties.isEmpty()) {
            log.warn("ignoring system properties that are not kmem4j settings: {} (known: {})",
                config.unknownSystemProperties, String.join(", ", AgentConfig.knownKeys()));
        }
        if (!config.unknownEnvironmentVariables.isEmpty()) {
            log.warn("ignoring environment variables that are not kmem4j settings: {} (known: {})",
                config.unknownEnvironmentVariables, String.join(", ", AgentConfig.knownEnvironmentNames()));
        }
        if (config.nettyMaxSizeClassIgnored) {
            log.warn("nettyMaxSizeClassBytes has no effect without presets=netty-allocator");
        }
        if (!config.enabled) {
            log.info("kmem4j is installed but disabled (enabled=false)");
            return null;
        }
        return config;
    }

    private static void install(final AgentConfig config, final Instrumentation inst, final boolean dynamic)
        throws Exception {
        final Logger log = AgentLog.get(AgentInstaller.class);
        final long t1 = System.nanoTime();
        final BootstrapBridge.Members members = BootstrapBridge.members();
        final BridgeField bridge = members.allocator;
        if (bridge.get() != null) {
            log.info("kmem4j is already serving ByteBuffer.allocateDirect in this JVM; this {} changes nothing",
                dynamic ? "attach" : "agent");
            return;
        }
        SlabAllocator.checkJdk(); // at start, not at the first allocation: an unsupported JDK is said at once
        io.kmem4j.agent.bridge.NativeHeapTrim.configure(config.trimNativeHeap);
        final LazyAllocator lazy = new LazyAllocator(config.allocator, config.ownedLifecycle, inst, members,
            new java.util.function.Consumer<String>() { // not a lambda: none spun in premain
                @Override
                public void accept(final String why) {
                    markState("off (" + why + ")"); // a later attach says so instead of installing again
                }
            });
        final boolean routed = !config.pools.isEmpty() || !config.excludeCallers.isEmpty();
        final long t2 = System.nanoTime();
        final PoolsView pools;
        final NettyView netty;
        try {
            // the pools' releases must know kmem4j's buffers from their first call: with pools the allocator is built now
            final Interceptor eager = routed ? lazy.buildNow() : null;
            bridge.set(eager != null ? eager : lazy);
            AllocateDirectRewrite.install(inst, members);
            pools = routed ? installPools(inst, members, eager.allocator(), config) : null;
            netty = config.nettyAllocator ? installNetty(inst, members, config) : null;
        } catch (final Throwable t) {
            // off for real: later allocations go to the JDK; buffers already served stay valid (close())
            lazy.stop();
            final SlabAllocator built = lazy.existing();
            if (built != null) {
                built.close();
            }
            throw t;
        }
        final long t3 = System.nanoTime();
        // anonymous classes, not lambdas, on this path: each lambda spins a class and LambdaForms at first use
        final PoolRouter router = pools == null ? null : pools.router();
        final NettyBuffers nettyBuffers = netty == null ? null : netty.buffers();
        Runtime.getRuntime().addShutdownHook(new AgentThread("kmem4j-shutdown", new Runnable() {
            @Override
            public void run() {
                shutdown(members, lazy, router, nettyBuffers, config);
            }
        }));
        // in premain, before any other agent or the application reads the platform's buffer pools
        final StatsSnapshots snapshots = new StatsSnapshots(new java.util.function.Supplier<AllocatorStats>() {
            @Override
            public AllocatorStats get() {
                final SlabAllocator allocator = lazy.existing(); // never built for a statistic
                return allocator == null ? AllocatorStats.EMPTY : allocator.stats();
            }
        });
        final Kmem4jBufferPool bufferPool = new Kmem4jBufferPool(snapshots);
        final Jmx jmx = new Jmx(lazy, snapshots, bufferPool, config.effective, pools, netty);
        final String notListed = PlatformBufferPool.install(inst, members, bufferPool, jmx);
        if (notListed != null) {
            log.warn("the kmem4j pool is not in the platform's buffer pools (metrics libraries do not show it): {}",
                notListed);
        }
        jmx.listed = notListed == null;
        if (dynamic || notListed != null || platformServerMayExist(inst)) {
            jmx.startAfter(JMX_DELAY_MILLIS); // no platform server creation to wait for, or none that would tell us
        }
        final long t4 = System.nanoTime();
        log.debug("installed in {} ms: bridge and JDK probe {} ms, ByteBuffer retransformation{} {} ms, pools and"
                + " JMX hooks {} ms", (t4 - t1) / 1_000_000, (t2 - t1) / 1_000_000,
            routed ? ", allocator and pools" : "", (t3 - t2) / 1_000_000, (t4 - t3) / 1_000_000);
        log.info("kmem4j {} serving ByteBuffer.allocateDirect for capacities {}..{} bytes ({}{}){}{}",
            AgentVersion.get(), config.allocator.minCapacityBytes(), SlabAllocator.maxCapacity(config.allocator),
            dynamic ? "attached" : "premain",
            routed ? "" : ", allocator built at the first allocation",
            (config.pools.isEmpty() ? "" : " and " + config.pools.size() + " buffer pool(s)")
                + (config.nettyAllocator ? " and Netty's pooled and adaptive direct buffers" : ""),
            config.summary ? "; summary at exit" : "");
        setProperty(SERVING_PROPERTY, AgentVersion.get() + (dynamic ? " (attached)" : " (premain)"));
    }

    private static void openJavaBase(final Instrumentation inst) {
        final Module javaBase = ByteBuffer.class.getModule();
        final Module me = AgentInstaller.class.getModule();
        final Map<String, Set<Module>> opens = new java.util.HashMap<>(Map.of("java.nio", Set.of(me)));
        if (javaBase.getPackages().contains("jdk.internal.ref")) {
            opens.put("jdk.internal.ref", Set.of(me)); // JDK 17-25: the JDK's cleaner (owned lifecycle)
        }
        // jdk.internal.misc: Agrona's Unsafe and virtual threads' carriers; jdk.internal.access: the carrier thread.
        // Opened, which exports them too: an empty map of exports links one lambda fewer in redefineModule
        opens.put("jdk.internal.misc", Set.of(me));
        opens.put("jdk.internal.access", Set.of(me));
        inst.redefineModule(javaBase, Set.of(), Map.of(), opens, Set.of(), Map.of());
    }

    /**
     * Points the bridge's pool fields at a {@link PoolRouter} and installs the {@link PoolTransformer}
     * when {@code presets}, {@code pools} or {@code excludeCallers} is set.
     *
     * @return the Pools bean's view, or {@code null} when none of those keys is set
     */
    private static PoolsView installPools(final Instrumentation inst, final BootstrapBridge.Members members,
                                          final SlabAllocator allocator, final AgentConfig config) throws Exception {
        if (config.pools.isEmpty() && config.excludeCallers.isEmpty()) {
            return null;
        }
        final PoolRouter router = new PoolRouter(allocator);
        router.connect(members);
        final PoolTransformer transformer = new PoolTransformer(members, config.pools, config.excludeCallers);
        transformer.install(inst);
        return new PoolsView(router, transformer, config.pools);
    }

    /**
     * {@code presets=netty-allocator}: points the bridge's {@code nettyBuffer} at a {@link NettyBuffers}
     * and installs the {@link NettyTransformer} (which retransforms Netty's allocators already loaded).
     *
     * @return the Netty bean's view, or {@code null} when the bridge was defined by an older kmem4j
     *         without the field (one WARN line; {@code allocateDirect} is served all the same)
     */
    private static NettyView installNetty(final Instrumentation inst, final BootstrapBridge.Members members,
                                          final AgentConfig config) {
        if (members.nettyBuffer == null) {
            AgentLog.get(AgentInstaller.class).warn("presets=netty-allocator is left out: an earlier kmem4j defined"
                + " java.nio.Kmem4jBridge in this JVM without the field it needs; Netty keeps its own allocators");
            return null;
        }
        final SlabAllocator nettyAllocator = new SlabAllocator(config.nettyAllocatorConfig);
        io.kmem4j.agent.bridge.NativeHeapTrim.watchForAgent(nettyAllocator);
        final NettyBuffers buffers = new NettyBuffers(nettyAllocator, inst);
        members.nettyBuffer.set(buffers);
        final NettyTransformer transformer = new NettyTransformer(members.nettyBuffer);
        transformer.install(inst);
        return new NettyView(buffers, transformer);
    }

    /** After a dynamic attach (or when the platform MBean server may exist already) the beans are registered this long after the agent starts, ms. */
    static final long JMX_DELAY_MILLIS = 1000;

    /**
     * @return true when an MBean server class is loaded already (the platform MBean server may exist, made
     *         by the JDK's management agent, {@code -Dcom.sun.management.jmxremote}, or another agent)
     */
    private static boolean platformServerMayExist(final Instrumentation inst) {
        for (final Class<?> c : inst.getInitiatedClasses(null)) {
            if ("com.sun.jmx.mbeanserver.JmxMBeanServer".equals(c.getName())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The registration of kmem4j's beans, once, on a thread of its own ({@code kmem4j-jmx}). From
     * premain it waits for the platform MBean server to be created by someone who wants it (jconsole,
     * {@code slabtop} or any JMX client attaching starts the JDK's management agent, which creates it;
     * so do JMX exporters and the application itself): creating it loads some 300 classes and costs
     * 0.1-0.2 s of CPU and a few MB of heap, which a program that never looks should not pay. The JDK
     * reads the platform's buffer pools while it creates the server, through the list kmem4j rewrites
     * ({@link PlatformBufferPool}), which calls {@link #run()}: the registration starts then, on its
     * own thread (the creating thread holds the JDK's management locks; registering on it could
     * deadlock against another thread creating the server).
     */
    private static final class Jmx implements Runnable {
        /** 1 once started (not an AtomicBoolean: its VarHandle costs some 2 ms of start-up on 25). */
        private final java.util.concurrent.atomic.AtomicInteger started = new java.util.concurrent.atomic.AtomicInteger();
        private final LazyAllocator lazy;
        private final StatsSnapshots snapshots;
        private final Kmem4jBufferPool bufferPool;
        private final Map<String, String> config;
        private final PoolsView pools;
        private final NettyView netty;
        /** True when the pool is in the platform's list (a platform server registers it itself). */
        volatile boolean listed;

        Jmx(final LazyAllocator lazy, final StatsSnapshots snapshots, final Kmem4jBufferPool bufferPool,
            final Map<String, String> config, final PoolsView pools, final NettyView netty) {
            this.lazy = lazy;
            this.netty = netty;
            this.snapshots = snapshots;
            this.bufferPool = bufferPool;
            this.config = config;
            this.pools = pools;
        }

        /** The platform MBean server is being created: register now. Returns at once, never throws. */
        @Override
        public void run() {
            startAfter(0);
        }

        void startAfter(final long delayMillis) {
            if (!started.compareAndSet(0, 1)) {
                return;
            }
            try {
                new AgentThread("kmem4j-jmx", new Runnable() {
                    @Override
                    public void run() {
                        register(delayMillis);
                    }
                }).start();
            } catch (final Throwable t) {
                started.set(0); // e.g. no thread could be made now: the next creation of the server tries again
            }
        }

        private void register(final long delayMillis) {
            try {
                if (delayMillis > 0) {
                    Thread.sleep(delayMillis);
                }
                // the beans show the allocator's size classes: someone is looking, so it is built now if not yet
                Interceptor interceptor = null;
                for (int tries = 0; interceptor == null && tries < 10 && lazy.failure() == null && !lazy.stopped();
                     tries++) {
                    interceptor = lazy.interceptor(); // null: a build under way on another thread took too long
                    if (interceptor == null) {
                        Thread.sleep(LazyAllocator.WAIT_MILLIS);
                    }
                }
                if (interceptor == null) {
                    if (lazy.failure() != null) {
                        registerDisabled(lazy.failure(), config);
                    }
                    return;
                }
                final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
                final Kmem4jMBeans.Registration r = Kmem4jMBeans.register(server,
                    new AllocatorView(snapshots, interceptor.allocator(), config, interceptor::failures));
                final Logger log = AgentLog.get(AgentInstaller.class);
                log.debug("registered {} and {} SlabCache beans", r.allocator(), r.caches().size());
                for (final String problem : r.problems()) {
                    log.warn("JMX: {}", problem);
                }
                final String poolProblem = listed ? Kmem4jBufferPool.registerOnPlatform(bufferPool) : null;
                if (poolProblem != null) {
                    log.warn("JMX: {}", poolProblem);
                }
                if (pools != null && r.allocator() != null) {
                    registerBean(pools, r.allocator().toString().replace("type=Allocator", "type=Pools"));
                }
                if (netty != null && r.allocator() != null) {
                    registerBean(netty, r.allocator().toString().replace("type=Allocator", "type=Netty"));
                    final SlabAllocator n = netty.buffers().allocator();
                    final Map<String, String> nettyConfig = new java.util.LinkedHashMap<>(config);
                    nettyConfig.putAll(n.config().asMap()); // its own largest class (nettyMaxSizeClassBytes)
                    final Kmem4jMBeans.Registration nr = Kmem4jMBeans.register(server, new AllocatorView(
                        new StatsSnapshots(n::stats), n, nettyConfig, netty.buffers()::failures), NettyView.ALLOCATOR_KEY);
                    for (final String problem : nr.problems()) {
                        log.warn("JMX: {}", problem);
                    }
                }
            } catch (final Throwable e) {
                AgentLog.get(AgentInstaller.class).warn("JMX registration failed, statistics are not visible"
                    + " over JMX: {}", e.toString());
            }
        }
    }

    /** {@code kmem4j:type=Pools} or {@code type=Netty} (with the Allocator bean's {@code instance=N}); a failure is one WARN line. */
    private static void registerBean(final Object bean, final String name) {
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(bean, new javax.management.ObjectName(name));
        } catch (final Exception e) {
            AgentLog.get(AgentInstaller.class).warn("JMX: {} not registered, its counters are not visible: {}",
                name, e.toString());
        }
    }

    private static void shutdown(final BootstrapBridge.Members members, final LazyAllocator lazy,
                                 final PoolRouter router, final NettyBuffers netty, final AgentConfig config) {
        try {
            // later allocations (other shutdown hooks) go to the JDK, and so do later pool allocations and
            // resizes; pool releases and resizes of kmem4j's buffers stay: they must still come back to
            // kmem4j, never reach the pool's own free
            if (lazy.stop() && router != null) {
                router.stopAllocating(members);
            }
            if (netty != null) {
                netty.stopAllocating();
            }
            if (config.summary) {
                final SlabAllocator allocator = lazy.existing();
                System.err.print(lazy.failure() != null ? Summary.off(lazy.failure()) + System.lineSeparator()
                    : Summary.format(allocator == null ? AllocatorStats.EMPTY : allocator.stats()));
                if (netty != null) {
                    System.err.print(Summary.format(netty.allocator().stats())
                        .replace("[kmem4j] summary:", "[kmem4j] netty summary:"));
                    System.err.println(Summary.nettyBuffers(netty));
                }
                System.err.flush();
            }
        } catch (final Throwable ignored) {
            // never disturb the JVM's shutdown
        }
    }

    /** Text summary printed at exit with {@code summary=true}. */
    static final class Summary {
        /**
         * @return one line of the Netty hook's counters (the {@code kmem4j:type=Netty} bean's): once every
         *         buffer is released, {@code releases = served + grown}
         */
        static String nettyBuffers(final NettyBuffers n) {
            return "[kmem4j] netty buffers: served=" + n.buffers() + " reused=" + n.reused() + " passed="
                + n.buffersPassed.sum() + " grown=" + n.grown.sum() + " releases=" + n.releases()
                + " keptBytes=" + n.keptBytes() + " failures=" + n.failures();
        }

        private Summary() {
        }

        /** @return the one line printed at exit when interception was off */
        static String off(final String reason) {
            return "[kmem4j] summary: interception was off, every direct buffer came from the JDK's allocator: "
                + reason;
        }

        /**
         * The counters, then one row per size class that served anything (no table when none did).
         * Written without {@code String.format}: the same text in every locale (a decimal comma would
         * break the scripts that read it), and no locale data loaded into a JVM on its way out (the
         * formatter cost a hello-world program some 40 ms of wall time at exit).
         */
        static String format(final AllocatorStats s) {
            final String nl = System.lineSeparator();
            final StringBuilder sb = new StringBuilder(256);
            sb.append("[kmem4j] summary: allocations=").append(s.allocations()).append(" frees=").append(s.frees())
                .append(" (explicit=").append(s.explicitFrees()).append(", gc=").append(s.gcFrees()).append(") live=")
                .append(s.liveBuffers()).append(" bytesInUse=").append(s.bytesInUse()).append(" bytesReserved=")
                .append(s.bytesReserved()).append(" fallbacks=").append(s.fallbacks()).append(" collectionsBeforeGrowing=")
                .append(s.collectionsBeforeGrowing()).append(nl);
            sb.append("[kmem4j] summary: remoteFreesSent=").append(s.remoteFreesSent()).append(" remoteFreesAbsorbed=")
                .append(s.remoteFreesAbsorbed()).append(" magazineHitRate=");
            fixed(sb, 100 * s.magazineHitRate(), 1);
            sb.append("% chunks=").append(s.chunks()).append(" threadCaches=").append(s.threadCaches())
                .append(" (retired ").append(s.threadCachesRetired()).append(')').append(nl);
            boolean header = false;
            for (final io.kmem4j.core.CacheStats c : s.caches()) {
                if (c.allocations() == 0) {
                    continue;
                }
                if (!header) {
                    header = true;
                    row(sb, "cache", "allocs", "active", "slabs", "hit%", "addr-order", nl);
                }
                row(sb, c.name(), Long.toString(c.allocations()), Long.toString(c.activeObjects()),
                    Long.toString(c.slabs()), fixed(new StringBuilder(), 100 * c.magazineHitRate(), 1).append('%')
                        .toString(), fixed(new StringBuilder(), c.addressOrderScore(), 2).toString(), nl);
            }
            return sb.toString();
        }

        /** One table line: the name left-aligned in 14, the rest right-aligned in 10, 10, 8, 8 and 10. */
        private static void row(final StringBuilder sb, final String name, final String allocs, final String active,
                                final String slabs, final String hit, final String order, final String nl) {
            sb.append("[kmem4j] summary: ").append(name);
            pad(sb, 14 - name.length());
            final String[] cells = {allocs, active, slabs, hit, order};
            final int[] widths = {10, 10, 8, 8, 10};
            for (int k = 0; k < cells.length; k++) {
                sb.append(' ');
                pad(sb, widths[k] - cells[k].length());
                sb.append(cells[k]);
            }
            sb.append(nl);
        }

        private static void pad(final StringBuilder sb, final int n) {
            for (int k = 0; k < n; k++) {
                sb.append(' ');
            }
        }

        /**
         * {@code v} with {@code decimals} digits after a point, rounded half up from its decimal form
         * ({@link Double#toString}): as {@code %.Nf} in the root locale, without {@code BigDecimal}
         * (whose class initialisation on JDK 25 cost some 20 ms at exit).
         */
        static StringBuilder fixed(final StringBuilder sb, final double v, final int decimals) {
            if (!Double.isFinite(v)) {
                return sb.append(v);
            }
            if (v < 0 || (v == 0 && 1 / v < 0)) {
                sb.append('-');
            }
            final String s = Double.toString(Math.abs(v)); // "123.45" or "1.2345E-5"
            final int e = s.indexOf('E');
            final String mantissa = e < 0 ? s : s.substring(0, e);
            final int dot = mantissa.indexOf('.');
            // the number's decimal digits, and how many of them stand before the point
            final StringBuilder d = new StringBuilder(mantissa.length() + decimals + 8);
            d.append(mantissa, 0, dot).append(mantissa, dot + 1, mantissa.length());
            int point = dot + (e < 0 ? 0 : Integer.parseInt(s.substring(e + 1)));
            while (point < 1) { // 0.005: one digit before the point at least
                d.insert(0, '0');
                point++;
            }
            while (d.length() < point + decimals + 1) {
                d.append('0');
            }
            final boolean up = d.charAt(point + decimals) >= '5';
            d.setLength(point + decimals);
            if (up) { // half up, carrying
                int k = d.length() - 1;
                while (k >= 0 && d.charAt(k) == '9') {
                    d.setCharAt(k--, '0');
                }
                if (k < 0) {
                    d.insert(0, '1');
                    point++;
                } else {
                    d.setCharAt(k, (char) (d.charAt(k) + 1));
                }
            }
            int lead = 0;
            while (lead < point - 1 && d.charAt(lead) == '0') {
                lead++;
            }
            sb.append(d, lead, point);
            if (decimals > 0) {
                sb.append('.').append(d, point, point + decimals);
            }
            return sb;
        }
    }
}
