package io.kmem4j.agent.jmx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.management.InstanceAlreadyExistsException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

import io.kmem4j.core.CacheStats;
import io.kmem4j.core.SlabAllocator;

/**
 * Registers kmem4j's MXBeans: {@code kmem4j:type=Allocator} and one
 * {@code kmem4j:type=SlabCache,name=<cache name>} per size class, all reading one shared
 * {@link StatsSnapshots}.
 *
 * <p>Never throws (case C17): if {@code kmem4j:type=Allocator} is taken (another kmem4j in this
 * JVM, or anything else), the beans are registered as {@code kmem4j:type=Allocator,instance=N} and
 * {@code kmem4j:type=SlabCache,name=<cache>,instance=N} with the first free {@code N >= 2}; a cache
 * bean whose name is still taken is skipped and reported in {@link Registration#problems()}. An
 * Allocator bean of an earlier load that serves nothing ({@code Enabled=false}, see
 * {@link #registerDisabled}) is replaced rather than numbered around, so {@code kmem4j:type=Allocator}
 * always shows the latest answer: after an attach that failed, a later one that serves takes the name.
 */
public final class Kmem4jMBeans {
    /** The JMX domain of every kmem4j bean. */
    public static final String DOMAIN = "kmem4j";
    /** {@code kmem4j:type=Allocator}. */
    public static final String ALLOCATOR = DOMAIN + ":type=Allocator";
    /** Instance numbers tried before giving up. */
    static final int MAX_INSTANCES = 64;

    private Kmem4jMBeans() {
    }

    /**
     * What was registered.
     *
     * @param allocator the Allocator bean's name, or null if it could not be registered
     * @param caches    the SlabCache beans registered
     * @param problems  one line per bean that could not be registered (empty when all went well)
     */
    public record Registration(ObjectName allocator, List<ObjectName> caches, List<String> problems) {
    }

    /**
     * Builds the views over {@code allocator} and registers them. Never throws.
     *
     * @param server              usually the platform MBean server
     * @param allocator           the allocator to show
     * @param configuration       the agent's effective configuration (Configuration attribute)
     * @param interceptorFailures allocations that failed inside kmem4j
     * @return what was registered
     */
    public static Registration register(final MBeanServer server, final SlabAllocator allocator,
                                        final Map<String, String> configuration,
                                        final LongSupplier interceptorFailures) {
        try {
            final StatsSnapshots snapshots = new StatsSnapshots(allocator::stats);
            return register(server, new AllocatorView(snapshots, allocator, configuration, interceptorFailures));
        } catch (final Throwable t) {
            return new Registration(null, List.of(), List.of("kmem4j MXBeans not registered: " + t));
        }
    }

    /**
     * Registers {@code kmem4j:type=Allocator} for an agent that serves nothing ({@code Enabled=false},
     * {@code DisabledReason}; see {@link AllocatorView#disabled}), so that jconsole, {@code attach} and
     * {@code slabtop} can tell why. Never throws.
     *
     * @param server        usually the platform MBean server
     * @param reason        why interception is off
     * @param configuration the agent's effective configuration (Configuration attribute)
     * @return what was registered (no SlabCache beans)
     */
    public static Registration registerDisabled(final MBeanServer server, final String reason,
                                                final Map<String, String> configuration) {
        try {
            return register(server, AllocatorView.disabled(reason, configuration));
        } catch (final Throwable t) {
            return new Registration(null, List.of(), List.of("kmem4j MXBean not registered: " + t));
        }
    }

    /**
     * Registers {@code view} and a {@link SlabCacheView} per cache of its snapshots. Never throws.
     *
     * @param server the MBean server
     * @param view   the Allocator view
     * @return what was registered
     */
    public static Registration register(final MBeanServer server, final AllocatorView view) {
        return register(server, view, null);
    }

    /**
     * Registers {@code view} as a second allocator of this agent, named {@code name}: its beans are
     * {@code kmem4j:type=Allocator,name=<name>} and {@code kmem4j:type=SlabCache,allocator=<name>,name=<cache>}
     * ({@code null}: the agent's own, as {@link #register(MBeanServer, AllocatorView)}). Never throws.
     *
     * @param server the MBean server
     * @param view   the Allocator view
     * @param name   the allocator's name, a valid ObjectName value ({@code netty}), or null
     * @return what was registered
     */
    public static Registration register(final MBeanServer server, final AllocatorView view, final String name) {
        final List<String> problems = new ArrayList<>();
        final List<ObjectName> caches = new ArrayList<>();
        ObjectName allocatorName = null;
        int instance = 0;
        try {
            for (int n = 1; n <= MAX_INSTANCES && allocatorName == null; n++) {
                final ObjectName candidate = name == null ? allocatorName(n)
                    : new ObjectName(ALLOCATOR + ",name=" + name + (n <= 1 ? "" : ",instance=" + n));
                final OneSnapshotMBean bean = new OneSnapshotMBean(view, AllocatorMXBean.class, view.snapshots());
                try {
                    server.registerMBean(bean, candidate);
                    allocatorName = candidate;
                    instance = n;
                } catch (final InstanceAlreadyExistsException taken) {
                    if (standsIn(server, candidate)) {
                        // an earlier load of the agent that serves nothing: this one replaces it
                        server.unregisterMBean(candidate);
                        server.registerMBean(bean, candidate);
                        allocatorName = candidate;
                        instance = n;
                    }
                    // else: try the next instance number
                }
            }
            if (allocatorName == null) {
                problems.add(ALLOCATOR + " and instances 2.." + MAX_INSTANCES + " are all taken");
                return new Registration(null, List.of(), List.copyOf(problems));
            }
        } catch (final Throwable t) {
            problems.add(ALLOCATOR + ": " + t);
            return new Registration(null, List.of(), List.copyOf(problems));
        }
        final List<CacheStats> stats;
        try {
            stats = view.snapshots().get().stats().caches();
        } catch (final Throwable t) {
            problems.add("SlabCache beans: cannot read the caches: " + t);
            return new Registration(allocatorName, List.of(), List.copyOf(problems));
        }
        for (int i = 0; i < stats.size(); i++) {
            final CacheStats c = stats.get(i);
            ObjectName cache = null;
            try {
                cache = name == null ? cacheName(c.name(), instance) : new ObjectName(DOMAIN + ":type=SlabCache,allocator="
                    + name + ",name=" + valueOf(c.name()) + (instance <= 1 ? "" : ",instance=" + instance));
                server.registerMBean(new OneSnapshotMBean(new SlabCacheView(view.snapshots(), i, c),
                    SlabCacheMXBean.class, view.snapshots()), cache);
                caches.add(cache);
            } catch (final InstanceAlreadyExistsException taken) {
                problems.add(cache + " is already registered (by something else); that cache is not shown");
            } catch (final Throwable t) {
                problems.add((cache != null ? cache.toString() : c.name()) + ": " + t);
            }
        }
        return new Registration(allocatorName, List.copyOf(caches), List.copyOf(problems));
    }

    /** @return true when {@code name} is a kmem4j Allocator bean with {@code Enabled=false} (it has no caches) */
    private static boolean standsIn(final MBeanServer server, final ObjectName name) {
        try {
            return Boolean.FALSE.equals(server.getAttribute(name, "Enabled"));
        } catch (final Exception e) {
            return false;
        }
    }

    /**
     * @param instance 1 for the first kmem4j in a JVM
     * @return {@code kmem4j:type=Allocator} or {@code kmem4j:type=Allocator,instance=N}
     */
    public static ObjectName allocatorName(final int instance) throws MalformedObjectNameException {
        return new ObjectName(instance <= 1 ? ALLOCATOR : ALLOCATOR + ",instance=" + instance);
    }

    /**
     * @param cache    cache name, e.g. {@code kmem4j-4096}
     * @param instance 1 for the first kmem4j in a JVM
     * @return {@code kmem4j:type=SlabCache,name=<cache>} (quoted if needed), plus {@code ,instance=N} when N &gt; 1
     */
    public static ObjectName cacheName(final String cache, final int instance) throws MalformedObjectNameException {
        return new ObjectName(DOMAIN + ":type=SlabCache,name=" + valueOf(cache)
            + (instance <= 1 ? "" : ",instance=" + instance));
    }

    private static String valueOf(final String value) {
        for (int i = 0; i < value.length(); i++) {
            if (",=:\"*?\n".indexOf(value.charAt(i)) >= 0) {
                return ObjectName.quote(value);
            }
        }
        return value;
    }
}
