package io.kmem4j.it.apps;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Runs beside {@link RetransformingAgent} and an agent that registers {@code kmem4j:type=Allocator}:
 * allocates, duplicates, slices and releases ({@code invokeCleaner}) {@value #N} direct buffers of
 * 1000 bytes, asks the other agent to retransform the {@code java.nio} classes and the JDK cleaner
 * again, and does the same once more. Prints, per phase, {@code <phase>: allocations=N explicitFrees=N}
 * (the differences of the Allocator bean's counters across the phase) and
 * {@code <phase>: agent allocateDirect=N duplicate=N slice=N} (the other agent's counts), and
 * {@code contents: ok} when every buffer read back what was written. Exit 1 when the bean never
 * appears (30 s) or a buffer reads back wrong.
 */
public final class RetransformedApp {

    private static final int N = 20;

    private RetransformedApp() {
    }

    public static void main(String[] args) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName allocator = new ObjectName("kmem4j:type=Allocator");
        for (int i = 0; i < 300 && !server.isRegistered(allocator); i++) {
            Thread.sleep(100);
        }
        if (!server.isRegistered(allocator)) {
            System.out.println("no kmem4j:type=Allocator after 30 s");
            System.exit(1);
        }
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
        boolean ok = phase("before", server, allocator, unsafe);
        Class.forName("io.kmem4j.it.apps.RetransformingAgent").getMethod("retransformAgain").invoke(null);
        System.out.println("retransformed again");
        ok &= phase("after", server, allocator, unsafe);
        System.out.println(ok ? "contents: ok" : "contents: WRONG");
        System.exit(ok ? 0 : 1);
    }

    private static boolean phase(String name, MBeanServer server, ObjectName allocator, sun.misc.Unsafe unsafe)
            throws Exception {
        long allocations = read(server, allocator, "Allocations");
        long frees = read(server, allocator, "ExplicitFrees");
        long[] agentBefore = agentCounts();
        boolean ok = true;
        List<ByteBuffer> buffers = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(1000);
            b.putInt(996, i);
            ok &= b.duplicate().getInt(996) == i && b.slice().getInt(996) == i && b.get(0) == 0;
            buffers.add(b);
        }
        buffers.forEach(unsafe::invokeCleaner);
        long[] agentAfter = agentCounts();
        System.out.println(name + ": allocations=" + (read(server, allocator, "Allocations") - allocations)
                + " explicitFrees=" + (read(server, allocator, "ExplicitFrees") - frees));
        System.out.println(name + ": agent allocateDirect=" + (agentAfter[0] - agentBefore[0])
                + " duplicate=" + (agentAfter[1] - agentBefore[1]) + " slice=" + (agentAfter[2] - agentBefore[2]));
        return ok;
    }

    private static long[] agentCounts() {
        return new long[] {count("allocateDirect"), count("duplicate"), count("slice")};
    }

    private static long count(String method) {
        return Long.parseLong(System.getProperty("retransforming-agent." + method, "0"));
    }

    /** A fresh read: older than the beans' shared snapshot (200 ms). */
    private static long read(MBeanServer server, ObjectName name, String attribute) throws Exception {
        Thread.sleep(250);
        return ((Number) server.getAttribute(name, attribute)).longValue();
    }
}
