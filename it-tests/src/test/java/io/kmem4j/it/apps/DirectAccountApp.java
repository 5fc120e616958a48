package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One account of direct memory (field case C2): keeps ten 1 MiB and a thousand 4 KiB direct buffers
 * live, then prints what the JDK's {@code BufferPool} bean named {@code direct} and, if some agent
 * registered it, the allocator bean say:
 * {@code c2: poolMemoryUsed=.. poolTotalCapacity=.. poolCount=.. bytesReserved=.. bytesInUse=.. ...}.
 * Plain program; exit 0.
 */
public final class DirectAccountApp {

    public static final int LARGE = 10;
    public static final int LARGE_BYTES = 1 << 20;
    public static final int SMALL = 1000;
    public static final int SMALL_BYTES = 4096;

    private DirectAccountApp() {
    }

    public static void main(String[] args) throws Exception {
        boolean bean = BeanReads.awaitAllocator(5000);
        Map<String, Long> poolAtStart = BeanReads.directPool();
        List<ByteBuffer> live = new ArrayList<>();
        for (int i = 0; i < LARGE; i++) {
            live.add(ByteBuffer.allocateDirect(LARGE_BYTES).put(0, (byte) i));
        }
        for (int i = 0; i < SMALL; i++) {
            live.add(ByteBuffer.allocateDirect(SMALL_BYTES).put(SMALL_BYTES - 1, (byte) i));
        }
        Map<String, Long> kmem = BeanReads.freshAllocator("BytesReserved", "BytesInUse", "LiveBuffers", "Chunks",
                "Allocations", "Fallbacks");
        Map<String, Long> pool = BeanReads.directPool();
        System.out.println("c2: allocatorBean=" + bean + " poolAtStart " + BeanReads.format(poolAtStart));
        System.out.println("c2: poolMemoryUsed=" + pool.get("MemoryUsed") + " poolTotalCapacity="
                + pool.get("TotalCapacity") + " poolCount=" + pool.get("Count")
                + (kmem.isEmpty() ? "" : " bytesReserved=" + kmem.get("BytesReserved") + " bytesInUse="
                + kmem.get("BytesInUse") + " liveBuffers=" + kmem.get("LiveBuffers") + " chunks=" + kmem.get("Chunks")
                + " allocations=" + kmem.get("Allocations") + " fallbacks=" + kmem.get("Fallbacks")));
        long check = 0;
        for (ByteBuffer b : live) {
            check += b.get(0) + b.get(b.capacity() - 1);
        }
        System.out.println("c2: live=" + live.size() + " check=" + check);
    }
}
