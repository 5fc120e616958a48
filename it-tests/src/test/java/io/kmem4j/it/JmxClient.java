package io.kmem4j.it;

import static org.awaitility.Awaitility.await;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * A JMX connection to another local JVM, found by pid through the Attach API: {@code
 * VirtualMachine.attach(pid)}, {@code startLocalManagementAgent()}, then a real {@link JMXConnector}
 * to the returned local connector address. The target needs no JMX flags.
 */
public final class JmxClient implements AutoCloseable {

    public static final ObjectName ALLOCATOR = objectName("kmem4j:type=Allocator");
    public static final ObjectName MEMORY = objectName(ManagementFactory.MEMORY_MXBEAN_NAME);

    static {
        // Bound every JMX call: RMI waits forever for a response unless this is set before the
        // RMI transport classes load (nothing else in the test JVM uses RMI before us).
        if (System.getProperty("sun.rmi.transport.tcp.responseTimeout") == null) {
            System.setProperty("sun.rmi.transport.tcp.responseTimeout", "30000");
        }
    }

    private final String target;
    private final JMXConnector connector;
    private final MBeanServerConnection connection;

    private JmxClient(String target, JMXConnector connector) throws IOException {
        this.target = target;
        this.connector = connector;
        this.connection = connector.getMBeanServerConnection();
    }

    /**
     * Attaches to the JVM with the given pid and connects to its platform MBean server.
     *
     * @param target describes the target JVM in failure messages (e.g. {@code forkedJvm.toString()})
     * @throws AssertionError if attaching or connecting fails or takes longer than {@code timeout}
     */
    public static JmxClient attach(long pid, String target, Duration timeout) {
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kmem4j-it-attach-" + pid);
            t.setDaemon(true);
            return t;
        });
        AtomicReference<String> address = new AtomicReference<>();
        Future<JMXConnector> future = executor.submit(() -> {
            VirtualMachine vm = VirtualMachine.attach(String.valueOf(pid));
            try {
                address.set(vm.startLocalManagementAgent());
            } finally {
                vm.detach();
            }
            return JMXConnectorFactory.connect(new JMXServiceURL(address.get()));
        });
        String context = "JMX via the Attach API to " + target + " (pid " + pid + ") from the test JVM "
                + System.getProperty("java.vm.name") + " " + Runtime.version() + " (" + System.getProperty("java.home") + ")";
        try {
            JMXConnector connector = future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new JmxClient(target + " (pid " + pid + ", " + address.get() + ")", connector);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new AssertionError("timed out after " + timeout.toMillis() + " ms connecting " + context
                    + (address.get() != null ? "; local connector address was " + address.get() : ""), e);
        } catch (ExecutionException e) {
            throw new AssertionError("could not connect " + context + ": " + e.getCause()
                    + (address.get() != null ? "; local connector address was " + address.get() : ""), e.getCause());
        } catch (IOException e) {
            throw new AssertionError("could not open an MBeanServerConnection " + context + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting " + context, e);
        } finally {
            executor.shutdownNow();
        }
    }

    public MBeanServerConnection connection() {
        return connection;
    }

    public boolean isRegistered(ObjectName name) {
        try {
            return connection.isRegistered(name);
        } catch (IOException e) {
            throw new AssertionError("JMX call isRegistered(" + name + ") to " + target + " failed: " + e, e);
        }
    }

    /** Waits (polling every 100 ms) until the MBean is registered. */
    public void awaitRegistered(ObjectName name, Duration timeout) {
        await("MBean " + name + " registered in " + target)
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(100))
                .pollInSameThread()
                .until(() -> isRegistered(name));
    }

    /** The attribute names the MBean declares (for diagnostics). */
    public List<String> attributeNames(ObjectName name) {
        try {
            List<String> names = new ArrayList<>();
            for (MBeanAttributeInfo info : connection.getMBeanInfo(name).getAttributes()) {
                names.add(info.getName() + ":" + info.getType());
            }
            return names;
        } catch (IOException | JMException e) {
            throw new AssertionError("JMX getMBeanInfo(" + name + ") on " + target + " failed: " + e, e);
        }
    }

    public long readLong(ObjectName name, String attribute) {
        return asLong(name, attribute, read(name, attribute));
    }

    /** One attribute as the bean returns it (a {@code Boolean}, {@code String}, ...). */
    public Object read(ObjectName name, String attribute) {
        try {
            return connection.getAttribute(name, attribute);
        } catch (IOException | JMException e) {
            throw new AssertionError("JMX read of " + name + "." + attribute + " on " + target + " failed: " + e
                    + "; declared attributes: " + safeAttributeNames(name), e);
        }
    }

    /** Reads several attributes with one JMX call; fails naming any attribute the MBean did not return. */
    public Map<String, Long> readLongs(ObjectName name, String... attributes) {
        AttributeList list;
        try {
            list = connection.getAttributes(name, attributes);
        } catch (IOException | JMException e) {
            throw new AssertionError("JMX read of " + name + " " + String.join(",", attributes) + " on "
                    + target + " failed: " + e, e);
        }
        Map<String, Object> raw = new LinkedHashMap<>();
        for (Attribute a : list.asList()) {
            raw.put(a.getName(), a.getValue());
        }
        Map<String, Long> values = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        for (String attribute : attributes) {
            if (raw.containsKey(attribute)) {
                values.put(attribute, asLong(name, attribute, raw.get(attribute)));
            } else {
                missing.add(attribute);
            }
        }
        if (!missing.isEmpty()) {
            throw new AssertionError(name + " on " + target + " did not return attribute(s) " + missing
                    + "; declared attributes: " + safeAttributeNames(name));
        }
        return values;
    }

    /** Invokes a no-argument operation. */
    public Object invoke(ObjectName name, String operation) {
        try {
            return connection.invoke(name, operation, new Object[0], new String[0]);
        } catch (IOException | JMException e) {
            throw new AssertionError("JMX invoke of " + name + "." + operation + "() on " + target + " failed: "
                    + e, e);
        }
    }

    /** {@code MemoryMXBean.gc()} in the target, i.e. {@code System.gc()} there. */
    public void gc() {
        invoke(MEMORY, "gc");
    }

    @Override
    public String toString() {
        return "JmxClient[" + target + "]";
    }

    @Override
    public void close() {
        try {
            connector.close();
        } catch (IOException e) {
            // the target may already be gone; nothing to release on our side
        }
    }

    private long asLong(ObjectName name, String attribute, Object value) {
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        throw new AssertionError(name + "." + attribute + " on " + target + " is not an integral number: "
                + (value == null ? "null" : value.getClass().getName() + " " + value));
    }

    private String safeAttributeNames(ObjectName name) {
        try {
            return new TreeSet<>(attributeNames(name)).toString();
        } catch (AssertionError e) {
            return "<unavailable: " + e.getMessage() + ">";
        }
    }

    /** {@code new ObjectName(name)} for names known to be well-formed. */
    static ObjectName objectName(String name) {
        try {
            return new ObjectName(name);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(name, e);
        }
    }
}
