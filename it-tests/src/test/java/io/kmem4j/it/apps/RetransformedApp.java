package io.kmem4j.it.apps;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
        if (!BeanReads.awaitAllocator(30_000)) {
            System.out.println("no kmem4j:type=Allocator after 30 s");
            System.exit(1);
        }
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
        boolean ok = phase("before", unsafe);
        Class.forName("io.kmem4j.it.apps.RetransformingAgent").getMethod("retransformAgain").invoke(null);
        System.out.println("retransformed again");
        ok &= phase("after", unsafe);
        System.out.println(ok ? "contents: ok" : "contents: WRONG");
        System.exit(ok ? 0 : 1);
    }

    private static boolean phase(String name, sun.misc.Unsafe unsafe) throws Exception {
        Map<String, Long> before = BeanReads.freshAllocator("Allocations", "ExplicitFrees");
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
        Map<String, Long> after = BeanReads.freshAllocator("Allocations", "ExplicitFrees");
        System.out.println(name + ": allocations=" + (after.get("Allocations") - before.get("Allocations"))
                + " explicitFrees=" + (after.get("ExplicitFrees") - before.get("ExplicitFrees")));
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
}
