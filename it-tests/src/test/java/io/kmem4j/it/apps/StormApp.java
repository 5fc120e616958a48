package io.kmem4j.it.apps;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Allocation storms (field case C3), a plain program. Phases, one after the other:
 * <ol>
 *   <li>for each size s in {@link #SIZES} and each thread count t in {@link #THREADS}: t threads loop
 *       {@code allocateDirect(s)}, check it is zero-filled, write and read it back, and release it
 *       with {@code Unsafe.invokeCleaner}, for {@code phaseMillis} each (phase {@code <s>x<t>});</li>
 *   <li>one thread runs {@code allocateDirect(100)} in a loop and drops every buffer, never releasing
 *       one, for {@code dropMillis} (phase {@code drop}); only GC frees them.</li>
 * </ol>
 * Threads are named {@code storm-<phase>-<n>}. Every contended lock acquisition on them is recorded
 * by JFR ({@link LockContention}); the JVM's own blocked/waited counts of each thread
 * ({@code ThreadMXBean}, contention monitoring on) are read at the end of its phase while it is
 * still alive; a sampler reads the allocator bean (if some agent registered it) and the JDK's direct
 * pool every {@value #SAMPLE_MILLIS} ms.
 *
 * <p>Output lines (stdout), all {@code key=value}:
 * <pre>
 * storm: agent=true|false config {...}
 * storm: loop phase=256x8 size=256 threads=8 ops=.. blockedCount=.. blockedMillis=.. waitedCount=..
 * storm: checkpoint phase=256x8 threads=8 reserved=.. chunks=.. inUse=.. live=.. liveObjectBytes=..
 * storm: drop ops=.. gcs=.. millis=..
 * storm: memory phase=.. samples=.. maxReserved=.. maxInUse=.. maxLiveObjectBytes=.. maxPool=.. thirds=a/b/c
 * storm: contention phase=.. KMEM4J_GLOBAL=.. KMEM4J_CACHE=.. JDK_CLEANER=.. JDK_OTHER=.. OTHER=..
 * storm: contention-site phase=.. site=category|kind|Class.method:line count=..
 * storm: cache name=kmem4j-256 objectSize=.. objectsPerSlab=.. pagesPerSlab=..
 * storm: after-gc stormObjects=.. .. / storm: after-reap .. / storm: after-trim ..
 * storm: ok | storm: FAIL ..
 * </pre>
 * Arguments: {@code phaseMillis dropMillis [csvFile]}; the CSV gets every memory sample.
 */
public final class StormApp {

    public static final int[] SIZES = {256, 4096, 16384};
    public static final int[] THREADS = {1, 2, 8};
    public static final int DROP_SIZE = 100;
    static final long SAMPLE_MILLIS = 100;
    private static final String[] ALLOCATOR = {"BytesReserved", "Chunks", "BytesInUse", "LiveBuffers", "Fallbacks",
        "ThreadCaches"};

    private static volatile String failure;

    private StormApp() {
    }

    public static void main(String[] args) throws Exception {
        long phaseMillis = Long.parseLong(args[0]);
        long dropMillis = Long.parseLong(args[1]);
        boolean agent = BeanReads.awaitAllocator(5000);
        System.out.println("storm: agent=" + agent + " config " + BeanReads.configuration());
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (threads.isThreadContentionMonitoringSupported()) {
            threads.setThreadContentionMonitoringEnabled(true);
        }
        LockContention locks = LockContention.start();
        MemorySamples memory = MemorySamples.start(SAMPLE_MILLIS, StormApp::fail);
        List<String> phases = new ArrayList<>();
        for (int size : SIZES) {
            for (int t : THREADS) {
                String phase = size + "x" + t;
                phases.add(phase);
                memory.phase(phase);
                loop(phase, size, t, phaseMillis, threads);
            }
        }
        phases.add("drop");
        memory.phase("drop");
        drop(dropMillis);
        memory.phase("end");
        memory.stop();
        List<LockContention.Event> events = locks.stop(name -> name.startsWith("storm-"));
        for (String phase : phases) {
            List<LockContention.Event> mine = events.stream()
                    .filter(e -> e.thread().startsWith("storm-" + phase + "-")).toList();
            StringBuilder counts = new StringBuilder();
            LockContention.countByCategory(mine).forEach((c, n) -> counts.append(' ').append(c).append('=').append(n));
            System.out.println("storm: contention phase=" + phase + counts);
            LockContention.countBySite(mine).forEach((site, n) ->
                    System.out.println("storm: contention-site phase=" + phase + " site=" + site + " count=" + n));
            System.out.println("storm: memory phase=" + phase + " " + memory.summary(phase));
        }
        if (args.length > 2) {
            memory.writeCsv(Path.of(args[2]));
        }
        if (agent) {
            afterwards();
        }
        if (failure != null) {
            System.out.println("storm: FAIL " + failure);
            System.exit(1);
        }
        System.out.println("storm: ok");
    }

    /** {@code threads} threads allocate, check, release {@code size} bytes for {@code millis}. */
    private static void loop(String phase, int size, int threads, long millis, ThreadMXBean mx) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        CountDownLatch exit = new CountDownLatch(1);
        long[] ops = new long[threads];
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int me = i;
            workers.add(new Thread(() -> {
                try {
                    start.await();
                    ops[me] = allocateAndRelease(size, System.nanoTime() + millis * 1_000_000L);
                    done.countDown();
                    exit.await(); // stay alive (holding nothing) while the checkpoint is read
                } catch (InterruptedException e) {
                    fail(phase + ": interrupted");
                }
            }, "storm-" + phase + "-" + i));
        }
        workers.forEach(Thread::start);
        start.countDown();
        done.await();
        long blocked = 0;
        long blockedMillis = 0;
        long waited = 0;
        for (Thread w : workers) {
            ThreadInfo info = mx.getThreadInfo(w.getId());
            if (info != null) {
                blocked += info.getBlockedCount();
                blockedMillis += Math.max(0, info.getBlockedTime());
                waited += info.getWaitedCount();
            }
        }
        long total = 0;
        for (long n : ops) {
            total += n;
        }
        System.out.println("storm: loop phase=" + phase + " size=" + size + " threads=" + threads + " ops=" + total
                + " blockedCount=" + blocked + " blockedMillis=" + blockedMillis + " waitedCount=" + waited);
        Map<String, Long> now = BeanReads.freshAllocator(ALLOCATOR);
        if (!now.isEmpty()) {
            System.out.println("storm: checkpoint phase=" + phase + " threads=" + threads + " reserved="
                    + now.get("BytesReserved") + " chunks=" + now.get("Chunks") + " inUse=" + now.get("BytesInUse")
                    + " live=" + now.get("LiveBuffers") + " liveObjectBytes=" + BeanReads.liveObjectBytes());
        }
        exit.countDown();
        for (Thread w : workers) {
            w.join();
        }
    }

    private static long allocateAndRelease(int size, long deadline) {
        long n = 0;
        try {
            do {
                for (int k = 0; k < 256; k++, n++) {
                    ByteBuffer b = ByteBuffer.allocateDirect(size);
                    if (b.getLong(0) != 0 || b.get(size - 1) != 0) {
                        fail(Thread.currentThread().getName() + ": buffer " + n + " is not zero-filled");
                    }
                    b.putLong(0, n).put(size - 1, (byte) n);
                    if (b.getLong(0) != n || b.get(size - 1) != (byte) n) {
                        fail(Thread.currentThread().getName() + ": buffer " + n + " lost what was written");
                    }
                    Cleaners.invokeCleaner(b);
                }
            } while (System.nanoTime() - deadline < 0);
        } catch (Throwable t) {
            fail(Thread.currentThread().getName() + " after " + n + " buffers: " + t);
        }
        return n;
    }

    /** One thread: {@code allocateDirect(100)} in a loop, every buffer dropped, never released. */
    private static void drop(long millis) throws InterruptedException {
        long gcsBefore = gcCount();
        long[] ops = new long[1];
        long[] sink = new long[1];
        Thread t = new Thread(() -> {
            long deadline = System.nanoTime() + millis * 1_000_000L;
            long n = 0;
            long s = 0;
            try {
                do {
                    for (int k = 0; k < 1024; k++, n++) {
                        ByteBuffer b = ByteBuffer.allocateDirect(DROP_SIZE);
                        b.put(DROP_SIZE - 1, (byte) n);
                        s += b.get(DROP_SIZE - 1);
                    }
                } while (System.nanoTime() - deadline < 0);
            } catch (Throwable e) {
                fail("storm-drop after " + n + " buffers: " + e);
            }
            ops[0] = n;
            sink[0] = s;
        }, "storm-drop-0");
        long start = System.nanoTime();
        t.start();
        t.join();
        System.out.println("storm: drop ops=" + ops[0] + " gcs=" + (gcCount() - gcsBefore) + " millis="
                + (System.nanoTime() - start) / 1_000_000 + " sink=" + sink[0]);
    }

    /**
     * With the agent, once the storm threads have ended: GC until the storm's caches hold no live
     * object, then two reaper intervals later ({@code after-reap}: the caches of the ended threads and
     * the frees that arrived after their owners ended are back), then after the {@code trim}
     * operation.
     */
    private static void afterwards() throws Exception {
        long deadline = System.nanoTime() + 15_000_000_000L;
        long stormObjects;
        do {
            System.gc();
            Thread.sleep(100);
            stormObjects = 0;
            for (Map.Entry<String, Map<String, Long>> c : BeanReads.caches("ActiveObjects", "ObjectSize").entrySet()) {
                if (isStormClass(c.getValue().get("ObjectSize"))) {
                    stormObjects += c.getValue().get("ActiveObjects");
                }
            }
        } while (stormObjects > 0 && System.nanoTime() - deadline < 0);
        System.out.println("storm: after-gc stormObjects=" + stormObjects + " " + BeanReads.format(BeanReads.freshAllocator(ALLOCATOR)));
        Thread.sleep(2 * reapIntervalMillis() + 300);
        System.out.println("storm: after-reap " + BeanReads.format(BeanReads.freshAllocator(ALLOCATOR)) + " liveObjectBytes="
                + BeanReads.liveObjectBytes());
        for (Map.Entry<String, Map<String, Long>> c : BeanReads.caches("ObjectSize", "ObjectsPerSlab", "PagesPerSlab",
                "Allocations").entrySet()) {
            if (c.getValue().get("Allocations") > 0) {
                System.out.println("storm: cache name=" + c.getKey() + " " + BeanReads.format(c.getValue()));
            }
        }
        ManagementFactory.getPlatformMBeanServer().invoke(new javax.management.ObjectName(BeanReads.ALLOCATOR), "trim",
                new Object[0], new String[0]);
        System.out.println("storm: after-trim " + BeanReads.format(BeanReads.freshAllocator(ALLOCATOR)) + " liveObjectBytes="
                + BeanReads.liveObjectBytes());
    }

    /** The size classes the storm uses (with the default classes: 128, 256, 4096, 16384). */
    private static boolean isStormClass(long objectSize) {
        for (int size : SIZES) {
            if (objectSize == size) {
                return true;
            }
        }
        return objectSize == 128;
    }

    private static long reapIntervalMillis() throws Exception {
        for (String kv : BeanReads.configuration().split(",")) {
            if (kv.startsWith("reapIntervalMillis=")) {
                return Long.parseLong(kv.substring(kv.indexOf('=') + 1));
            }
        }
        return 1000;
    }

    private static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    static void fail(String what) {
        if (failure == null) {
            failure = what;
        }
    }
}
