package io.kmem4j.it.apps;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

/**
 * A program that allocates no direct memory at all, run under a tiny {@code -XX:MaxDirectMemorySize}:
 * it waits (at most 30 s) for an agent to register {@code kmem4j:type=Allocator} on the platform MBean
 * server without creating that server itself ({@code MBeanServerFactory.findMBeanServer}: had this
 * program created it, its own main thread would read the cgroup files through NIO), then prints
 * {@code registered: Enabled=..} and {@code direct: count=N used=N} (the JDK's pool: what is taken of
 * the budget) and {@code pools: [..]}. Exit 1 when no such bean appears.
 */
public final class DirectBudgetApp {

    private DirectBudgetApp() {
    }

    public static void main(String[] args) throws Exception {
        ObjectName allocator = new ObjectName("kmem4j:type=Allocator");
        MBeanServer found = null;
        for (int i = 0; i < 300 && found == null; i++) {
            for (MBeanServer s : MBeanServerFactory.findMBeanServer(null)) {
                if (s.isRegistered(allocator)) {
                    found = s;
                }
            }
            if (found == null) {
                Thread.sleep(100);
            }
        }
        if (found == null) {
            System.out.println("no kmem4j:type=Allocator after 30 s");
            System.exit(1);
        }
        System.out.println("registered: Enabled=" + found.getAttribute(allocator, "Enabled"));
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
