package io.kmem4j.agent.jmx;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Objects;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InvalidAttributeValueException;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ReflectionException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import io.kmem4j.core.AllocatorStats;

/**
 * kmem4j as one of the platform's buffer pools: {@code java.nio:type=BufferPool,name=kmem4j}, next to
 * the JDK's {@code direct} and {@code mapped} pools, so that every reader of
 * {@code ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)} (Micrometer's
 * {@code JvmMemoryMetrics}, Prometheus client_java's {@code JvmBufferPoolMetrics}, OpenTelemetry's runtime
 * telemetry, a JMX exporter) shows it without configuration. The agent puts it into the platform list
 * ({@code io.kmem4j.agent.bridge.PlatformBufferPool}) and onto the platform MBean server
 * ({@link #register}).
 *
 * <p>The mapping (README, "kmem4j in the platform's buffer pools"), from the snapshot the
 * {@code kmem4j:type=Allocator} bean reads, so both show the same numbers:
 * <ul>
 *   <li>{@link #getCount()}: live kmem4j buffers ({@code LiveBuffers});</li>
 *   <li>{@link #getTotalCapacity()}: bytes, the sum of their capacities ({@code BytesInUse});</li>
 *   <li>{@link #getMemoryUsed()}: bytes kmem4j holds of the JDK's direct-memory budget, its chunks
 *       ({@code BytesReserved}), which the JDK's {@code direct} pool counts too.</li>
 * </ul>
 *
 * <p>It is its own {@link DynamicMBean} (the MXBean view of {@link BufferPoolMXBean}), so that a platform
 * MBean server registers it as it is: {@code isInstanceOf(name, "java.lang.management.BufferPoolMXBean")}
 * holds and {@code ManagementFactory.getPlatformMXBeans(connection, BufferPoolMXBean.class)} proxies
 * it as it proxies the JDK's pools (wrapped in a {@code StandardMBean}, as the JDK wraps its own
 * pools, a class outside the boot loader would fail that check and that call).
 *
 * <p>Threads: any (JMX and metrics threads). Values come from a snapshot at most
 * {@link StatsSnapshots#MAX_AGE_NANOS} old.
 */
public final class Kmem4jBufferPool implements BufferPoolMXBean, DynamicMBean {
    /** The pool's name, the value of {@code name=} in its ObjectName. */
    public static final String NAME = "kmem4j";
    /** {@code java.nio:type=BufferPool,name=kmem4j}. */
    public static final String OBJECT_NAME = "java.nio:type=BufferPool,name=" + NAME;

    private final StatsSnapshots snapshots;
    /** {@link #objectName()}, made on first use. */
    private volatile ObjectName objectName;
    /**
     * The MXBean view of this object, which its {@link DynamicMBean} methods answer from; made on
     * first use, not in premain (the MXBean introspection cost some 40 ms of every program's start-up).
     */
    private volatile StandardMBean mbean;

    /**
     * @param snapshots the snapshot source shared with the {@code kmem4j:type=Allocator} bean
     */
    public Kmem4jBufferPool(final StatsSnapshots snapshots) {
        this.snapshots = Objects.requireNonNull(snapshots, "snapshots");
    }

    /** @return the MXBean view, made once (a race makes two equal views; one is kept) */
    private StandardMBean mbean() {
        StandardMBean m = mbean;
        if (m == null) {
            m = new StandardMBean(this, BufferPoolMXBean.class, true);
            mbean = m;
        }
        return m;
    }


    /** @return {@code java.nio:type=BufferPool,name=kmem4j} */
    public static ObjectName objectName() {
        try {
            return ObjectName.getInstance(OBJECT_NAME);
        } catch (final MalformedObjectNameException e) {
            throw new IllegalStateException(e); // a constant
        }
    }

    private AllocatorStats stats() {
        return snapshots.get().stats();
    }

    @Override
    public String getName() {
        return NAME;
    }

    /** @return live kmem4j buffers ({@code LiveBuffers}) */
    @Override
    public long getCount() {
        return stats().liveBuffers();
    }

    /** @return bytes: the capacities of the live kmem4j buffers ({@code BytesInUse}) */
    @Override
    public long getTotalCapacity() {
        return stats().bytesInUse();
    }

    /** @return bytes: kmem4j's chunks, reserved from the JDK's direct-memory budget ({@code BytesReserved}) */
    @Override
    public long getMemoryUsed() {
        return stats().bytesReserved();
    }

    @Override
    public ObjectName getObjectName() {
        ObjectName n = objectName;
        if (n == null) {
            n = objectName();
            objectName = n;
        }
        return n;
    }

    @Override
    public Object getAttribute(final String attribute)
        throws AttributeNotFoundException, MBeanException, ReflectionException {
        return mbean().getAttribute(attribute);
    }

    @Override
    public void setAttribute(final Attribute attribute)
        throws AttributeNotFoundException, InvalidAttributeValueException, MBeanException, ReflectionException {
        mbean().setAttribute(attribute);
    }

    @Override
    public AttributeList getAttributes(final String[] attributes) {
        return mbean().getAttributes(attributes);
    }

    @Override
    public AttributeList setAttributes(final AttributeList attributes) {
        return mbean().setAttributes(attributes);
    }

    @Override
    public Object invoke(final String actionName, final Object[] params, final String[] signature)
        throws MBeanException, ReflectionException {
        return mbean().invoke(actionName, params, signature);
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return mbean().getMBeanInfo();
    }

    /**
     * {@link #register}s {@code pool} on the platform MBean server and checks that the platform list
     * holds it. Never throws.
     *
     * @param pool the pool, already given to {@code io.kmem4j.agent.bridge.PlatformBufferPool}
     * @return {@code null} when both hold, else one line saying what does not
     */
    public static String registerOnPlatform(final Kmem4jBufferPool pool) {
        try {
            final String problem = register(ManagementFactory.getPlatformMBeanServer(), pool);
            if (problem != null) {
                return problem;
            }
            if (!ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).contains(pool)) {
                return OBJECT_NAME + " is registered but not in ManagementFactory.getPlatformMXBeans"
                    + "(BufferPoolMXBean.class): metrics libraries do not show it";
            }
            return null;
        } catch (final Throwable t) {
            return OBJECT_NAME + ": " + t;
        }
    }

    /**
     * Registers {@code pool} on {@code server} as a platform MBean server registers it, unless it
     * is there already (a platform MBean server created after the pool joined the platform list
     * registers it itself). Never throws.
     *
     * @param server usually the platform MBean server
     * @param pool   the pool
     * @return {@code null} when the pool is registered, else one line saying why not
     */
    public static String register(final MBeanServer server, final Kmem4jBufferPool pool) {
        try {
            if (!server.isRegistered(pool.getObjectName())) {
                server.registerMBean(pool, pool.getObjectName());
            }
            return null;
        } catch (final InstanceAlreadyExistsException raced) {
            return null;
        } catch (final Throwable t) {
            return OBJECT_NAME + " not registered: " + t;
        }
    }
}
