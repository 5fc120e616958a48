package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Direct buffers at the {@code -XX:MaxDirectMemorySize} limit (field case C1); run it with
 * {@code -XX:MaxDirectMemorySize=64m}. A plain program: the only outside name it uses is the JMX name
 * of an allocator bean, read if some agent registered it.
 *
 * <ul>
 *   <li>{@code churn}: 1000 times allocate 1 MiB, write a byte, drop it. Prints
 *       {@code c1a: completed=N of 1000 millis=..} and, if it stopped early,
 *       {@code c1a: oom at=i message=..}. Exit 0 either way (the caller judges).</li>
 *   <li>{@code live <bufferBytes>}: keeps buffers of {@code bufferBytes} live until the first
 *       {@code OutOfMemoryError} (at most {@value #MAX_LIVE}), then asks for one more twice, once with
 *       the interrupt status clear and once with it set, and prints the message, how long each failed
 *       call took, the interrupt status after it and the allocator bean's counters just before and after
 *       the failed calls; then releases a quarter of the live set ({@code invokeCleaner}) and allocates
 *       again. Lines start with {@code c1b:}; {@code c1b: FAIL ..} and exit 1 on a broken expectation
 *       the program can judge itself (zero-filled, interrupt status, working after release).</li>
 *   <li>{@code drop <bufferBytes> <threads> <perThread> <slots>}: each thread fills a ring of
 *       {@code slots} buffers, then {@code perThread} times replaces a random slot with a new buffer
 *       (the old one is dropped: only GC frees it). Prints {@code c1c: completed=N of M millis=..
 *       oom=K} and the first error as {@code c1c: oom message=..}. Exit 0 either way.</li>
 * </ul>
 */
public final class DirectLimitApp {

    private static final int MAX_LIVE = 4096;
    private static final String[] COUNTERS = {
        "Allocations", "Frees", "ExplicitFrees", "GcFrees", "LiveBuffers", "BytesInUse", "BytesReserved", "Chunks",
        "DoubleFrees", "InterceptorFailures", "Fallbacks",
    };

    private static boolean failed;

    private DirectLimitApp() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "churn" -> churn();
            case "live" -> live(Integer.parseInt(args[1]));
            case "drop" -> drop(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.flush();
        System.exit(failed ? 1 : 0);
    }

    private static void churn() {
        final int rounds = 1000;
        long start = System.nanoTime();
        int completed = 0;
        String oom = null;
        for (int i = 0; i < rounds; i++) {
            try {
                ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
                b.put(i & 1023, (byte) i);
                completed++;
            } catch (OutOfMemoryError e) {
                oom = "c1a: oom at=" + i + " message=" + e.getMessage();
                break;
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("c1a: completed=" + completed + " of " + rounds + " millis=" + millis);
        if (oom != null) {
            System.out.println(oom);
        }
    }

    private static void drop(int size, int threads, int perThread, int slots) throws InterruptedException {
        java.util.concurrent.atomic.AtomicInteger completed = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger ooms = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> first = new java.util.concurrent.atomic.AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            long seed = 0x9E3779B97F4A7C15L * (t + 1);
            Thread th = new Thread(() -> {
                ByteBuffer[] ring = new ByteBuffer[slots];
                long x = seed;
                for (int i = 0; i < slots + perThread; i++) {
                    x ^= x << 13;
                    x ^= x >>> 7;
                    x ^= x << 17;
                    int s = i < slots ? i : (int) ((x >>> 1) % slots);
                    try {
                        ring[s] = ByteBuffer.allocateDirect(size);
                        ring[s].put(0, (byte) 1);
                        if (i >= slots) {
                            completed.incrementAndGet();
                        }
                    } catch (OutOfMemoryError e) {
                        ooms.incrementAndGet();
                        first.compareAndSet(null, e.getMessage());
                    }
                }
            }, "dropper-" + t);
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("c1c: completed=" + completed.get() + " of " + (threads * perThread) + " millis=" + millis
            + " oom=" + ooms.get());
        if (first.get() != null) {
            System.out.println("c1c: oom message=" + first.get());
        }
    }

    private static void live(int size) throws Exception {
        boolean bean = BeanReads.awaitAllocator(5000);
        BeanReads.printAtStart();
        System.out.println("c1b: size=" + size + " allocatorBean=" + bean);
        List<ByteBuffer> live = new ArrayList<>();
        long start = System.nanoTime();
        String firstOom = null;
        long maxNanos = 0;
        int slow = 0;
        int firstSlow = -1;
        while (live.size() < MAX_LIVE) {
            long t0 = System.nanoTime();
            try {
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                b.put(0, (byte) 1).put(size - 1, (byte) 2);
                live.add(b);
            } catch (OutOfMemoryError e) {
                firstOom = e.getMessage();
                break;
            }
            long took = System.nanoTime() - t0;
            maxNanos = Math.max(maxNanos, took);
            if (took > 100_000_000L) {
                slow++;
                if (firstSlow < 0) {
                    firstSlow = live.size() - 1;
                }
            }
        }
        long fillMillis = (System.nanoTime() - start) / 1_000_000;
        // successful allocations only; the one that failed is not in these figures
        System.out.println("c1b: live=" + live.size() + " liveBytes=" + (long) live.size() * size + " fillMillis="
                + fillMillis + " maxAllocationMillis=" + maxNanos / 1_000_000 + " allocationsOver100ms=" + slow
                + " firstOver100ms=" + firstSlow);
        System.out.println("c1b: first-oom message=" + firstOom);
        if (firstOom == null) {
            fail("no OutOfMemoryError after " + live.size() + " live buffers of " + size + " bytes");
            return;
        }
        System.out.println("c1b: pool " + BeanReads.format(BeanReads.directPool()));

        Map<String, Long> before = BeanReads.freshAllocator(COUNTERS);
        failedCall(size, false);
        failedCall(size, true);
        Map<String, Long> after = BeanReads.freshAllocator(COUNTERS);
        System.out.println("c1b: counters-before " + BeanReads.format(before));
        System.out.println("c1b: counters-after " + BeanReads.format(after));
        Map<String, Long> delta = new LinkedHashMap<>();
        after.forEach((k, v) -> delta.put(k, v - before.getOrDefault(k, 0L)));
        System.out.println("c1b: counters-delta " + BeanReads.format(delta));

        // release a quarter, then the JVM must serve again: same size, a small one, and the live set intact
        int released = live.size() / 4;
        for (int i = 0; i < released; i++) {
            Cleaners.invokeCleaner(live.set(i, null));
        }
        int again = 0;
        List<ByteBuffer> more = new ArrayList<>();
        try {
            for (; again < released / 2; again++) {
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                for (int j = 0; j < size; j += 4096) {
                    if (b.get(j) != 0) {
                        fail("buffer allocated after the release is not zero-filled at " + j);
                        break;
                    }
                }
                more.add(b);
            }
            for (int k = 0; k < 16; k++) {
                more.add(ByteBuffer.allocateDirect(4096).put(0, (byte) 7));
            }
        } catch (OutOfMemoryError e) {
            fail("OutOfMemoryError after releasing " + released + " buffers (re-allocated " + again + "): "
                    + e.getMessage());
        }
        for (int i = released; i < live.size(); i++) {
            ByteBuffer b = live.get(i);
            if (b.get(0) != 1 || b.get(size - 1) != 2) {
                fail("live buffer " + i + " lost its content");
                break;
            }
        }
        System.out.println("c1b: released=" + released + " reallocated=" + again + " small=16 after-release "
                + BeanReads.format(BeanReads.freshAllocator("LiveBuffers", "BytesInUse", "BytesReserved", "Chunks")));
        System.out.println("c1b: done live=" + (live.size() - released + more.size()));
    }

    /** One more allocation that must fail; prints how it failed. */
    private static void failedCall(int size, boolean interrupted) {
        String tag = interrupted ? "interrupted" : "plain";
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        long t0 = System.nanoTime();
        String message = null;
        String other = null;
        try {
            ByteBuffer extra = ByteBuffer.allocateDirect(size);
            other = "allocated " + extra;
        } catch (OutOfMemoryError e) {
            message = e.getMessage();
        } catch (Throwable t) {
            other = t.toString();
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        boolean after = Thread.interrupted(); // reads and clears
        System.out.println("c1b: " + tag + " millis=" + millis + " interruptedBefore=" + interrupted
                + " interruptedAfter=" + after);
        System.out.println("c1b: " + tag + " message=" + message);
        if (other != null) {
            fail(tag + ": expected an OutOfMemoryError, got " + other);
        }
        if (after != interrupted) {
            fail(tag + ": interrupt status changed from " + interrupted + " to " + after);
        }
    }

    private static void fail(String what) {
        failed = true;
        System.out.println("c1b: FAIL " + what);
    }
}
