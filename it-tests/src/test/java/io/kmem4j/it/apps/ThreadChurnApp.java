package io.kmem4j.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads that die (field case C5), a plain program.
 * <ol>
 *   <li>(a) {@value #THREADS} threads in turn: each allocates ten {@value #SIZE}-byte buffers, writes a
 *       pattern, releases nine with {@code Unsafe.invokeCleaner}, hands one to a long-lived holder
 *       thread and ends. The holder verifies each buffer and releases them {@value #HOLDER_BATCH} at a
 *       time, after their owners are gone. After {@link #CHECKPOINTS} threads the allocator bean (if
 *       registered) is read twice: at once ({@code raw}), and once the caches of the ended threads
 *       have been adopted and the reserved bytes have held still for three reaps ({@code adopted}:
 *       {@code ThreadCaches} back to the holder's one, empty chunks given back).</li>
 *   <li>(b) {@value #TASKS} {@code ForkJoinPool.commonPool()} tasks each allocate a
 *       {@value #TASK_SIZE}-byte buffer, check it is zero-filled, write, verify and release it.</li>
 * </ol>
 * Then it prints {@code churn: holding} and waits for end of input (so a test can read the beans and
 * call {@code trim} over JMX). Output: {@code churn: threads=N raw ... adopted ...},
 * {@code churn: tasks=N ...}, {@code churn: ok ...} or {@code churn: FAIL ...} (exit 1).
 */
public final class ThreadChurnApp {

    public static final int THREADS = 1000;
    public static final int SIZE = 16 * 1024;
    public static final int TASKS = 10_000;
    public static final int TASK_SIZE = 4096;
    public static final int HOLDER_BATCH = 50;
    static final Set<Integer> CHECKPOINTS = Set.of(250, 500, 1000);
    private static final String[] FIGURES = {"BytesReserved", "Chunks", "ThreadCaches", "LiveBuffers", "BytesInUse"};
    private static final ByteBuffer END = ByteBuffer.allocate(0);

    private static volatile String failure;

    private ThreadChurnApp() {
    }

    public static void main(String[] args) throws Exception {
        boolean agent = BeanReads.awaitAllocator(5000);
        System.out.println("churn: agent=" + agent + " parallelism=" + ForkJoinPool.commonPool().getParallelism());
        System.out.println("churn: config " + BeanReads.configuration());
        BlockingQueue<ByteBuffer> handOff = new ArrayBlockingQueue<>(THREADS);
        AtomicInteger held = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        Thread holder = new Thread(() -> hold(handOff, held, released), "churn-holder");
        holder.start();
        for (int t = 1; t <= THREADS; t++) {
            int id = t;
            Thread worker = new Thread(() -> work(id, handOff), "churn-" + t);
            worker.start();
            worker.join();
            if (CHECKPOINTS.contains(t)) {
                while (held.get() < t && failure == null) {
                    Thread.sleep(1); // the holder has taken every hand-off (and released all but t % 50)
                }
                checkpoint(t, released.get(), agent);
            }
        }
        handOff.put(END);
        holder.join();
        tasks();
        System.gc();
        if (failure != null) {
            System.out.println("churn: FAIL " + failure);
            System.exit(1);
        }
        System.out.println("churn: ok threads=" + THREADS + " handedOff=" + held.get() + " releasedByHolder="
                + released.get() + " tasks=" + TASKS);
        System.out.println("churn: holding (close stdin to exit)");
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    }

    private static void work(int id, BlockingQueue<ByteBuffer> handOff) {
        try {
            List<ByteBuffer> mine = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
                if (b.getLong(0) != 0 || b.getLong(SIZE - 8) != 0) {
                    fail("thread " + id + ": buffer " + i + " is not zero-filled");
                }
                b.putInt(0, id).putInt(SIZE - 4, ~id);
                mine.add(b);
            }
            for (int i = 1; i < 10; i++) {
                Cleaners.invokeCleaner(mine.get(i));
            }
            handOff.put(mine.get(0));
        } catch (Throwable e) {
            fail("thread " + id + ": " + e);
        }
    }

    /** Takes the hand-offs, checks them, releases them in batches once their owners have ended. */
    private static void hold(BlockingQueue<ByteBuffer> handOff, AtomicInteger held, AtomicInteger released) {
        List<ByteBuffer> holding = new ArrayList<>();
        try {
            for (ByteBuffer b = handOff.take(); b != END; b = handOff.take()) {
                int id = b.getInt(0);
                if (b.getInt(SIZE - 4) != ~id) {
                    fail("holder: the buffer of thread " + id + " lost its pattern");
                }
                holding.add(b);
                if (holding.size() == HOLDER_BATCH) {
                    holding.forEach(Cleaners::invokeCleaner);
                    released.addAndGet(holding.size());
                    holding.clear();
                }
                held.incrementAndGet();
            }
            holding.forEach(Cleaners::invokeCleaner);
            released.addAndGet(holding.size());
        } catch (Throwable e) {
            fail("holder: " + e);
        }
    }

    private static void checkpoint(int threads, int releasedByHolder, boolean agent) throws Exception {
        if (!agent) {
            return;
        }
        Map<String, Long> raw = BeanReads.freshAllocator(FIGURES);
        long start = System.nanoTime();
        Map<String, Long> adopted;
        do {
            adopted = BeanReads.freshAllocator(FIGURES);
        } while (adopted.get("ThreadCaches") > 1 && System.nanoTime() - start < 10_000_000_000L);
        // then the allocator's own decay (empty chunks go back after a few reap intervals of idleness, the
        // time-based decay): the figure is taken once BytesReserved held still for three reaps
        long settled = adopted.get("BytesReserved");
        for (int same = 0; same < 3 && System.nanoTime() - start < 30_000_000_000L; ) {
            Thread.sleep(1100);
            adopted = BeanReads.freshAllocator(FIGURES);
            same = adopted.get("BytesReserved") == settled ? same + 1 : 0;
            settled = adopted.get("BytesReserved");
        }
        Map<String, Long> cache = BeanReads.caches("Slabs", "PartialSlabs", "PagesPerSlab").get("kmem4j-" + SIZE);
        System.out.println("churn: threads=" + threads + " releasedByHolder=" + releasedByHolder + " raw "
                + BeanReads.format(raw) + " adopted " + BeanReads.format(adopted) + " liveObjectBytes="
                + BeanReads.liveObjectBytes() + " slabs16k=" + cache.get("Slabs") + " partial16k=" + cache.get("PartialSlabs")
                + " pagesPerSlab16k=" + cache.get("PagesPerSlab")
                + " adoptionMillis=" + (System.nanoTime() - start) / 1_000_000);
    }

    private static void tasks() throws Exception {
        Set<String> workers = ConcurrentHashMap.newKeySet();
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) {
            int task = i;
            futures.add(ForkJoinPool.commonPool().submit(() -> {
                workers.add(Thread.currentThread().getName());
                ByteBuffer b = ByteBuffer.allocateDirect(TASK_SIZE);
                if (b.getLong(0) != 0 || b.getLong(TASK_SIZE - 8) != 0) {
                    fail("task " + task + ": buffer is not zero-filled");
                }
                b.putInt(0, task).putInt(TASK_SIZE - 4, ~task);
                if (b.getInt(0) != task || b.getInt(TASK_SIZE - 4) != ~task) {
                    fail("task " + task + ": buffer lost what was written");
                }
                Cleaners.invokeCleaner(b);
            }));
        }
        for (Future<?> f : futures) {
            f.get();
        }
        System.out.println("churn: tasks=" + TASKS + " threads=" + workers.size() + " "
                + BeanReads.format(BeanReads.freshAllocator(FIGURES)));
    }

    private static void fail(String what) {
        if (failure == null) {
            failure = what;
        }
    }
}
