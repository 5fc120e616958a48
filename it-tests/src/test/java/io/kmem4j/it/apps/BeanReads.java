package io.kmem4j.it.apps;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * In-process reads of MBeans by JMX name only, as any monitoring code in an application would do
 * (no class of the allocator is referenced): the allocator's bean {@value #ALLOCATOR}, if some agent
 * registered it, and the JDK's direct {@code BufferPool} bean.
 *
 * <p>The allocator's bean serves one snapshot that may be up to 200 ms old; {@link #freshAllocator}
 * waits out that age first so that the figures include everything this thread did before the call.
 */
public final class BeanReads {

    public static final String ALLOCATOR = "kmem4j:type=Allocator";
    public static final String DIRECT_POOL = "java.nio:type=BufferPool,name=direct";
    public static final String CACHES = "kmem4j:type=SlabCache,*";

    /** Longer than the allocator bean's snapshot age (200 ms). */
    private static final long SNAPSHOT_AGE_MILLIS = 260;

    private static final MBeanServer SERVER = platformServer();

    private BeanReads() {
    }

    /**
     * The platform MBean server, created on a thread of its own that then ends: its set-up reads files
     * with the JDK's temporary direct buffer (8 KiB, {@code sun.nio.ch.Util}, JDK 17-24), which the agent
     * serves like any other, and the JDK frees a thread's temporary buffers when the thread ends. So the
     * observer leaves no live buffer and no thread cache behind; its allocation and free stay counted
     * ({@link #atStart}).
     */
    private static MBeanServer platformServer() {
        Setup t = new Setup();
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return t.server != null ? t.server : ManagementFactory.getPlatformMBeanServer();
    }

    /**
     * A class of its own, not a lambda: a lambda's body is a static method of BeanReads, which another
     * thread cannot run while BeanReads is still being initialised (it would wait for {@code <clinit>}).
     */
    private static final class Setup extends Thread {
        volatile MBeanServer server;

        Setup() {
            super("bean-reads-setup");
        }

        @Override
        public void run() {
            server = ManagementFactory.getPlatformMBeanServer();
        }
    }

    /** True when this JVM was started with some {@code -javaagent:} (an allocator bean may appear). */
    public static boolean agentOnCommandLine() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.startsWith("-javaagent:"));
    }

    /** Prefix of the line {@link #printAtStart} prints. */
    public static final String AT_START = "beans: at-start ";

    /** What {@link #awaitAllocator} read once the bean was there; empty before or without the agent. */
    private static volatile Map<String, Long> atStart = Map.of();

    /**
     * Waits up to {@code millis} for the allocator bean (and its SlabCache beans) when the JVM has a
     * {@code -javaagent:}, not at all otherwise. Once the beans are there, keeps ({@link #atStart}) the
     * allocator's {@code Allocations}, {@code LiveBuffers}, {@code BytesInUse}, {@code BytesReserved},
     * the caches' summed {@code SlabBytes} and the largest slab's objects ({@code LargestSlabBytes}):
     * what the program had through the agent before its own work began, the observer's share
     * included. The agent registers its beans a second after start; the first use of the platform
     * MBean server (this class's, on the main thread) reads files with the JDK's temporary direct
     * buffer (8 KiB, JDK 17-24), which the agent serves from a slab. Tests that count exactly subtract it.
     *
     * @return whether the bean is registered
     */
    public static boolean awaitAllocator(long millis) throws Exception {
        ObjectName name = name(ALLOCATOR);
        if (!agentOnCommandLine()) {
            return SERVER.isRegistered(name);
        }
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!SERVER.isRegistered(name) && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        if (!SERVER.isRegistered(name)) {
            return false;
        }
        // the SlabCache beans are registered right after the allocator's
        long caches = allocator("SlabCaches").get("SlabCaches");
        while (SERVER.queryNames(name(CACHES), null).size() < caches && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
        // fresh: the bean's snapshot may predate the free of the observer's temporary buffer (its set-up
        // thread ended before this call), which the agent's bean registration, running at the same time,
        // may have read still live (CI: LiveBuffers=1 at start on JDK 17, 1 run in 10, then one free more)
        Map<String, Long> start = new LinkedHashMap<>(
                freshAllocator("Allocations", "LiveBuffers", "BytesInUse", "BytesReserved"));
        long slabBytes = 0;
        long largestSlab = 0;
        for (Map<String, Long> c : caches("SlabBytes", "ObjectsPerSlab", "ObjectSize").values()) {
            slabBytes += c.get("SlabBytes");
            largestSlab = Math.max(largestSlab, c.get("ObjectsPerSlab") * c.get("ObjectSize"));
        }
        start.put("SlabBytes", slabBytes);
        start.put("LargestSlabBytes", largestSlab);
        atStart = Map.copyOf(start);
        return true;
    }

    /**
     * {@link #awaitAllocator}'s figures, in the order named there; empty without the agent.
     */
    public static Map<String, Long> atStart() {
        Map<String, Long> ordered = new LinkedHashMap<>();
        for (String k : List.of("Allocations", "LiveBuffers", "BytesInUse", "BytesReserved", "SlabBytes",
                "LargestSlabBytes")) {
            if (atStart.containsKey(k)) {
                ordered.put(k, atStart.get(k));
            }
        }
        return ordered;
    }

    /** Prints {@value #AT_START} and {@link #atStart()} as {@code key=value} pairs (nothing without the agent). */
    public static void printAtStart() {
        if (!atStart.isEmpty()) {
            System.out.println(AT_START + format(atStart()));
        }
    }

    /** {@code " StartAllocations=.. StartLiveBuffers=.."}: {@link #atStart()} to append to a counters line. */
    public static String atStartFields() {
        StringBuilder b = new StringBuilder();
        atStart().forEach((k, v) -> b.append(" Start").append(k).append('=').append(v));
        return b.toString();
    }

    /**
     * The allocator bean's numeric attributes {@code names} read in one call (one snapshot), after
     * waiting out the snapshot age; empty when the bean is not registered.
     */
    public static Map<String, Long> freshAllocator(String... names) throws Exception {
        ObjectName name = name(ALLOCATOR);
        if (!SERVER.isRegistered(name)) {
            return Map.of();
        }
        Thread.sleep(SNAPSHOT_AGE_MILLIS);
        return numbers(SERVER.getAttributes(name, names));
    }

    /**
     * The allocator bean's numeric attributes {@code names} read in one call, as they are now (the
     * snapshot may be up to 200 ms old); empty when the bean is not registered.
     */
    public static Map<String, Long> allocator(String... names) throws Exception {
        ObjectName name = name(ALLOCATOR);
        return SERVER.isRegistered(name) ? numbers(SERVER.getAttributes(name, names)) : Map.of();
    }

    /** The allocator bean's {@code Configuration} attribute, or {@code ""} when it is not registered. */
    public static String configuration() throws Exception {
        ObjectName name = name(ALLOCATOR);
        return SERVER.isRegistered(name) ? (String) SERVER.getAttribute(name, "Configuration") : "";
    }

    /**
     * The numeric attributes {@code names} of every {@code kmem4j:type=SlabCache} bean, by cache name
     * ({@code kmem4j-<size>}), in size order; empty without the agent.
     */
    public static Map<String, Map<String, Long>> caches(String... names) throws Exception {
        Map<String, Map<String, Long>> caches = new java.util.TreeMap<>(
                java.util.Comparator.comparingInt((String n) -> Integer.parseInt(n.substring(n.indexOf('-') + 1))));
        for (ObjectName cache : SERVER.queryNames(name(CACHES), null)) {
            caches.put(cache.getKeyProperty("name"), numbers(SERVER.getAttributes(cache, names)));
        }
        return caches;
    }

    /** Sum over the caches of active objects times object size: the live set as the slabs hold it. */
    public static long liveObjectBytes() throws Exception {
        long sum = 0;
        for (Map<String, Long> c : caches("ActiveObjects", "ObjectSize").values()) {
            sum += c.get("ActiveObjects") * c.get("ObjectSize");
        }
        return sum;
    }

    /** {@code MemoryUsed}, {@code TotalCapacity} and {@code Count} of the JDK's direct buffer pool. */
    public static Map<String, Long> directPool() throws Exception {
        return numbers(SERVER.getAttributes(name(DIRECT_POOL), new String[] {"MemoryUsed", "TotalCapacity", "Count"}));
    }

    /** {@code key=value} pairs separated by spaces, in the map's order. */
    public static String format(Map<String, Long> values) {
        StringBuilder sb = new StringBuilder();
        values.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }

    private static Map<String, Long> numbers(AttributeList list) {
        Map<String, Long> values = new LinkedHashMap<>();
        for (Attribute a : list.asList()) {
            values.put(a.getName(), ((Number) a.getValue()).longValue());
        }
        return values;
    }

    private static ObjectName name(String text) {
        try {
            return new ObjectName(text);
        } catch (javax.management.MalformedObjectNameException e) {
            throw new IllegalArgumentException(text, e);
        }
    }
}
