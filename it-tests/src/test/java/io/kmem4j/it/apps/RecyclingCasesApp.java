package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.InvalidMarkException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Field cases C7, C10, C18 and C19 of {@code docs/cases.md}, exactly as written there, as an
 * ordinary program that knows nothing about any agent. Each case prints deterministic lines
 * ({@code c7: ...}, {@code c10: ...}, ...) and, after it, one {@code <case>: counters ...} line with the
 * allocator bean's figures (empty without an agent), which the test reads to see that released memory
 * came back at once and that nothing was freed twice. Ends with {@code recycling: ok} or {@code FAIL}
 * lines and exit code 1.
 *
 * <ul>
 *   <li>C7: {@code invokeCleaner} of a 1024-byte root succeeds; of {@code allocateDirect(1031).alignedSlice(8)}
 *       it throws {@code IllegalArgumentException} (message printed) and frees nothing: the root keeps its
 *       bytes after another 1031-byte buffer was allocated and filled.</li>
 *   <li>C10: (a) {@value #RACES} times two threads race {@code invokeCleaner} on the same 256-byte buffer;
 *       (b) {@code b} released, {@code b2} allocated, {@code b} released again; then {@value #DISTINCT}
 *       buffers, each with a distinct pattern, all verified.</li>
 *   <li>C18: every size just below, at and just above every size-class boundary: all zeros and exact
 *       capacity; filled with 0x5A, released, allocated again: all zeros.</li>
 *   <li>C19: a 64-byte buffer made little-endian, positioned and marked, written, released; the next
 *       64-byte buffer is big-endian, at position 0, limit = capacity = 64, has no mark, is direct and
 *       writable and reads 0.</li>
 * </ul>
 */
public final class RecyclingCasesApp {

    static final int RACES = 100_000;
    static final int DISTINCT = 1000;
    private static final String[] COUNTERS = {"Allocations", "Frees", "ExplicitFrees", "LiveBuffers", "DoubleFrees",
        "InterceptorFailures"};

    private static int failures;

    private RecyclingCasesApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        counters("recycling", "start");
        c7();
        c10();
        c18();
        c19();
        if (failures > 0) {
            System.out.println("recycling: FAIL failures=" + failures);
            System.out.flush();
            System.exit(1);
        }
        System.out.println("recycling: ok");
    }

    private static void c7() throws Exception {
        ByteBuffer r = ByteBuffer.allocateDirect(1024);
        counters("c7", "before-root");
        Cleaners.invokeCleaner(r);
        System.out.println("c7: invokeCleaner(allocateDirect(1024)) -> ok");
        counters("c7", "after-root");
        ByteBuffer root = ByteBuffer.allocateDirect(1031);
        fill(root, 7);
        ByteBuffer s = root.alignedSlice(8);
        counters("c7", "before-view");
        try {
            Cleaners.invokeCleaner(s);
            check(false, "c7: invokeCleaner of alignedSlice(8) was accepted");
        } catch (IllegalArgumentException e) {
            System.out.println("c7: invokeCleaner(allocateDirect(1031).alignedSlice(8)) -> " + e.getClass().getName()
                    + ": " + e.getMessage());
        }
        counters("c7", "after-view");
        ByteBuffer other = ByteBuffer.allocateDirect(1031);
        fill(other, 8);
        check(verify(root, 7), "c7: the root (and so its view) lost its bytes after the refused release");
        Cleaners.invokeCleaner(other);
        Cleaners.invokeCleaner(root);
        System.out.println("c7: done");
    }

    private static void c10() throws Exception {
        AtomicReference<ByteBuffer> current = new AtomicReference<>();
        CyclicBarrier barrier = new CyclicBarrier(2);
        AtomicInteger thrown = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                for (int i = 0; i < RACES; i++) {
                    barrier.await(30, TimeUnit.SECONDS);
                    release(current.get(), thrown);
                    barrier.await(30, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                failure.set(e);
            }
        }, "c10-racer");
        other.start();
        for (int i = 0; i < RACES && failure.get() == null; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(256);
            b.putInt(0, i);
            current.set(b);
            barrier.await(30, TimeUnit.SECONDS);
            release(b, thrown);
            barrier.await(30, TimeUnit.SECONDS);
        }
        other.join();
        check(failure.get() == null, "c10: racer failed: " + failure.get());
        System.out.println("c10: (a) races=" + RACES + " exceptions=" + thrown.get());
        counters("c10", "after-races");

        ByteBuffer b = ByteBuffer.allocateDirect(512);
        fill(b, 10);
        Cleaners.invokeCleaner(b);
        ByteBuffer b2 = ByteBuffer.allocateDirect(512);
        fill(b2, 11);
        Cleaners.invokeCleaner(b); // stale: b2 may have b's block
        check(verify(b2, 11), "c10: (b) the buffer allocated after b lost its bytes to b's second release");
        List<ByteBuffer> live = new ArrayList<>();
        for (int i = 0; i < DISTINCT; i++) {
            ByteBuffer x = ByteBuffer.allocateDirect(64 + (i * 37) % 4000);
            fill(x, 1000 + i);
            live.add(x);
        }
        int broken = 0;
        for (int i = 0; i < DISTINCT; i++) {
            broken += verify(live.get(i), 1000 + i) ? 0 : 1;
        }
        check(broken == 0 && verify(b2, 11), "c10: (b) buffers sharing bytes: " + broken);
        System.out.println("c10: (b) stale release, then " + DISTINCT + " distinct patterns: broken=" + broken);
        counters("c10", "after-stale");
        live.forEach(Cleaners::invokeCleaner);
        Cleaners.invokeCleaner(b2);
    }

    private static void release(ByteBuffer b, AtomicInteger thrown) {
        try {
            Cleaners.invokeCleaner(b);
        } catch (RuntimeException e) {
            thrown.incrementAndGet();
        }
    }

    private static void c18() {
        int sizes = 0;
        for (int n : ConformanceApp.sizes()) {
            ByteBuffer b = ByteBuffer.allocateDirect(n);
            check(b.capacity() == n, "c18: capacity " + b.capacity() + " for " + n);
            check(zero(b), "c18: fresh " + n + "-byte buffer not all zero");
            for (int i = 0; i < n; i++) {
                b.put(i, (byte) 0x5A);
            }
            Cleaners.invokeCleaner(b);
            ByteBuffer again = ByteBuffer.allocateDirect(n);
            check(again.capacity() == n && zero(again), "c18: " + n + "-byte buffer after one filled with 0x5A"
                    + " was released is not all zero");
            Cleaners.invokeCleaner(again);
            sizes++;
        }
        System.out.println("c18: sizes=" + sizes + " all zero, also after recycling");
    }

    private static void c19() {
        ByteBuffer b = ByteBuffer.allocateDirect(64);
        b.order(ByteOrder.LITTLE_ENDIAN);
        b.position(10).mark();
        b.putInt(0, 1);
        Cleaners.invokeCleaner(b);
        ByteBuffer b2 = ByteBuffer.allocateDirect(64);
        boolean markGone;
        try {
            b2.reset();
            markGone = false;
        } catch (InvalidMarkException e) {
            markGone = true;
        }
        System.out.println("c19: order=" + b2.order() + " position=" + b2.position() + " limit=" + b2.limit()
                + " capacity=" + b2.capacity() + " reset-throws-InvalidMarkException=" + markGone + " direct="
                + b2.isDirect() + " readOnly=" + b2.isReadOnly() + " getInt(0)=" + b2.getInt(0));
        check(b2.order() == ByteOrder.BIG_ENDIAN && b2.position() == 0 && b2.limit() == 64 && b2.capacity() == 64
                && markGone && b2.isDirect() && !b2.isReadOnly() && b2.getInt(0) == 0, "c19: state survived recycling");
        Cleaners.invokeCleaner(b2);
    }

    // ------------------------------------------------------------------ helpers

    /** {@code <kase>: counters <when> Allocations=.. ...} (nothing after {@code <when>} without an agent). */
    private static void counters(String kase, String when) throws Exception {
        Map<String, Long> c = BeanReads.freshAllocator(COUNTERS);
        System.out.println(kase + ": counters " + when + " " + BeanReads.format(c));
    }

    private static byte pattern(long id, int index) {
        return (byte) (id * 31 + index * 7 + (id >>> 8));
    }

    private static void fill(ByteBuffer b, long id) {
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, pattern(id, i));
        }
    }

    private static boolean verify(ByteBuffer b, long id) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != pattern(id, i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean zero(ByteBuffer b) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            failures++;
            System.out.println("recycling: FAIL " + what);
        }
    }
}
