package io.kmem4j.it.apps;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

/**
 * A program that allocates no direct memory of its own, run under a tiny {@code -XX:MaxDirectMemorySize}.
 * First it waits 1.5 s and prints {@code servers: N}, the MBean servers that exist
 * ({@code MBeanServerFactory.findMBeanServer}, which creates none): an agent that registers its beans
 * only when the platform MBean server is created leaves it at 0. Then it creates the platform MBean
 * server itself, as jconsole's or any JMX client's attach would, and prints {@code server: created} or
 * {@code server: failed <message>} (on JDK 17-23 the JDK's own set-up reads the cgroup files through NIO,
 * which needs a temporary direct buffer the 10-byte budget does not hold, agent or not). When created
 * and the first argument is {@code agent}, it waits (at most 30 s) for {@code kmem4j:type=Allocator} and prints {@code registered: Enabled=..}
 * or {@code registered: none}. Last {@code direct: count=N used=N} (the JDK's pool: what is taken of the
 * budget) and {@code pools: [..]}. Exit 0.
 */
public final class DirectBudgetApp {

    private DirectBudgetApp() {
    }

    public static void main(String[] args) throws Exception {
        Thread.sleep(1500);
        System.out.println("servers: " + MBeanServerFactory.findMBeanServer(null).size());
        MBeanServer server = null;
        try {
            server = ManagementFactory.getPlatformMBeanServer();
            System.out.println("server: created");
        } catch (OutOfMemoryError e) {
            System.out.println("server: failed " + e.getMessage());
        }
        if (server != null && args.length > 0 && args[0].equals("agent")) {
            ObjectName allocator = new ObjectName("kmem4j:type=Allocator");
            for (int i = 0; i < 300 && !server.isRegistered(allocator); i++) {
                Thread.sleep(100);
            }
            System.out.println("registered: " + (server.isRegistered(allocator)
                    ? "Enabled=" + server.getAttribute(allocator, "Enabled") : "none"));
        }
        List<String> names = new ArrayList<>();
        for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            names.add(p.getName());
            if (p.getName().equals("direct")) {
                System.out.println("direct: count=" + p.getCount() + " used=" + p.getMemoryUsed());
            }
        }
        System.out.println("pools: " + names);
    }
}
