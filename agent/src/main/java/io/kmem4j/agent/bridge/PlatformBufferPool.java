package io.kmem4j.agent.bridge;

import java.lang.instrument.Instrumentation;
import java.lang.management.BufferPoolMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Puts one more buffer pool into the JDK's platform list, so that
 * {@code ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)} returns it and a platform MBean
 * server created from then on registers it under its {@code getObjectName()}, as it registers the JDK's
 * {@code direct} and {@code mapped} pools.
 *
 * <p>The list is built inside the JDK, the same way on JDK 17 to 27:
 * {@code ManagementFactory.getPlatformMXBeans} and the platform MBean server ask each
 * {@code PlatformComponent}; the buffer pools' component ({@code DefaultPlatformMBeanProvider}) maps
 * {@code sun.management.ManagementFactoryHelper.getBufferPoolMXBeans()}, which wraps
 * {@code jdk.internal.misc.VM.getBufferPools()} (the direct pool of {@code JavaNioAccess}, the mapped
 * pools of {@code FileChannelImpl}) once and caches the list. Only that one method is rewritten
 * ({@link BufferPoolListTransformer}): its result goes through {@code java.nio.Kmem4jBridge.bufferPools},
 * which this class sets to itself, answering a new list, the JDK's pools then this one. The JDK's cached
 * list, every signature and every other method stay as they are; should anything fail in
 * {@link #apply}, the JDK's list is answered unchanged.
 *
 * <p>A reader that took the list before (a metrics library bound earlier, another agent started
 * first) keeps the list it took: the pool is in every list taken after {@link #install} returned.
 * Registering the pool on a platform MBean server that already exists is the caller's part.
 *
 * <p>Threads: {@link #install} once per JVM; {@link #apply} on any thread that reads the list.
 */
public final class PlatformBufferPool implements UnaryOperator<Object> {
    private final BufferPoolMXBean pool;
    /** Run when the list is read while the platform MBean server is created; may be {@code null}. */
    private final Runnable onPlatformServer;

    private PlatformBufferPool(final BufferPoolMXBean pool, final Runnable onPlatformServer) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.onPlatformServer = onPlatformServer;
    }

    /**
     * @param bridge the bridge's members
     * @param pool   the pool to add, e.g. kmem4j's
     * @param onPlatformServer run (on the reading thread; it must return at once and never throw) each
     *               time the list is read from within {@code ManagementFactory.getPlatformMBeanServer()},
     *               that is while the platform MBean server is created; or {@code null}
     * @return {@code null} when the rewrite is in place (the platform list ends with {@code pool} from now
     *         on), else why not (for one log line); never throws
     */
    public static String install(final Instrumentation inst, final BootstrapBridge.Members bridge,
                                 final BufferPoolMXBean pool, final Runnable onPlatformServer) {
        final BufferPoolListTransformer transformer = new BufferPoolListTransformer();
        try {
            bridge.bufferPools.set(new PlatformBufferPool(pool, onPlatformServer));
            inst.addTransformer(transformer, true);
            // usually not loaded yet in premain: then the class is rewritten as it loads (no retransformation,
            // and java.management is not started early)
            final Class<?> helper = loaded(inst);
            if (helper != null) {
                inst.retransformClasses(helper);
                if (!transformer.rewritten()) {
                    throw new IllegalStateException(transformer.failure() != null ? transformer.failure()
                        : "the class was not offered for retransformation");
                }
            }
            return null;
        } catch (final Throwable t) {
            try {
                inst.removeTransformer(transformer);
                bridge.bufferPools.set(UnaryOperator.identity());
            } catch (final Throwable ignored) {
                // the rewrite, if any, answers the JDK's list through the identity or this pool
            }
            return t.toString();
        }
    }

    /** True when {@code ManagementFactory.getPlatformMBeanServer()} is on the calling thread's stack. */
    private static final java.util.function.Predicate<Object> PLATFORM_SERVER_BEING_CREATED =
        new java.util.function.Predicate<Object>() {
            private final StackWalker walker = StackWalker.getInstance();

            @Override
            public boolean test(final Object ignored) {
                return walker.walk(frames -> frames.anyMatch(f -> "getPlatformMBeanServer".equals(f.getMethodName())
                    && "java.lang.management.ManagementFactory".equals(f.getClassName())));
            }
        };

    /** @return {@code ManagementFactoryHelper} when the boot loader has loaded it, else {@code null} */
    private static Class<?> loaded(final Instrumentation inst) {
        final String name = BufferPoolListTransformer.HELPER.replace('/', '.');
        for (final Class<?> c : inst.getInitiatedClasses(null)) {
            if (name.equals(c.getName())) {
                return c;
            }
        }
        return null;
    }

    /**
     * @param pools the JDK's list of {@code BufferPoolMXBean}s
     * @return a new list, {@code pools} then kmem4j's pool; {@code pools} itself when it holds the pool
     *         already, is not a list, or anything fails
     */
    @Override
    @SuppressWarnings("unchecked")
    public Object apply(final Object pools) {
        try {
            if (onPlatformServer != null && PLATFORM_SERVER_BEING_CREATED.test(null)) {
                onPlatformServer.run();
            }
            if (!(pools instanceof List) || ((List<Object>) pools).contains(pool)) {
                return pools;
            }
            final List<Object> withPool = new ArrayList<>((List<Object>) pools);
            withPool.add(pool);
            return withPool;
        } catch (final Throwable t) {
            return pools; // the JDK's management must never fail because of kmem4j
        }
    }
}
