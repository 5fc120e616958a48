package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Releases from another thread (field case C12). Thread A allocates 16 KiB buffers and writes a
 * pattern; thread B takes them from a bounded queue, checks the pattern and releases them with
 * {@code Unsafe.invokeCleaner}, {@value #HANDOFFS} times. A also allocates {@value #LATE} buffers it
 * hands over only when it ends; after A has ended, B releases all but {@value #HELD} of them, which
 * stay reachable (a static field) until the JVM exits. Prints {@code c12: ok ..} (or
 * {@code c12: FAIL ..}, exit 1) and the allocator bean's counters, if registered.
 */
public final class RemoteFreeApp {

    public static final int SIZE = 16 * 1024;
    public static final int HANDOFFS = 200_000;
    public static final int LATE = 1000;
    public static final int HELD = 100;
    private static final ByteBuffer POISON = ByteBuffer.allocate(0);

    /** Still held when the JVM exits. */
    static final List<ByteBuffer> HELD_BUFFERS = new ArrayList<>();

    private static volatile String failure;

    private RemoteFreeApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        BeanReads.printAtStart();
        BlockingQueue<ByteBuffer> queue = new ArrayBlockingQueue<>(256);
        List<ByteBuffer> late = new ArrayList<>();
        Thread a = new Thread(() -> {
            try {
                for (int i = 0; i < HANDOFFS; i++) {
                    ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
                    if (b.getLong(SIZE - 8) != 0) {
                        fail("A: buffer " + i + " is not zero-filled");
                    }
                    b.putInt(0, i).putInt(SIZE - 4, ~i);
                    queue.put(b);
                }
                for (int i = 0; i < LATE; i++) {
                    ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
                    b.putInt(0, -i).putInt(SIZE - 4, i);
                    late.add(b);
                }
                queue.put(POISON);
            } catch (InterruptedException e) {
                fail("A interrupted");
            }
        }, "c12-A");
        long[] released = new long[1];
        Thread b = new Thread(() -> {
            try {
                for (int i = 0; ; i++) {
                    ByteBuffer buf = queue.take();
                    if (buf == POISON) {
                        break;
                    }
                    if (buf.getInt(0) != i || buf.getInt(SIZE - 4) != ~i) {
                        fail("B: buffer " + i + " lost its pattern");
                    }
                    Cleaners.invokeCleaner(buf);
                    released[0]++;
                }
                a.join(); // A has ended: the late buffers' owner is gone
                for (int i = 0; i < LATE; i++) {
                    ByteBuffer buf = late.get(i);
                    if (buf.getInt(0) != -i || buf.getInt(SIZE - 4) != i) {
                        fail("B: late buffer " + i + " lost its pattern");
                    }
                    if (i < LATE - HELD) {
                        Cleaners.invokeCleaner(buf);
                        released[0]++;
                    } else {
                        HELD_BUFFERS.add(buf);
                    }
                }
            } catch (InterruptedException e) {
                fail("B interrupted");
            }
        }, "c12-B");
        a.start();
        b.start();
        a.join();
        b.join();
        late.clear();
        // the held buffers are intact
        for (int k = 0; k < HELD_BUFFERS.size(); k++) {
            int i = LATE - HELD + k;
            if (HELD_BUFFERS.get(k).getInt(0) != -i) {
                fail("held buffer " + i + " lost its pattern");
            }
        }
        System.out.println("c12: counters " + BeanReads.format(BeanReads.freshAllocator("Allocations", "Frees",
                "ExplicitFrees", "GcFrees", "LiveBuffers", "BytesInUse", "BytesReserved", "Chunks", "RemoteFreesSent",
                "RemoteFreesAbsorbed", "ThreadCaches", "DoubleFrees", "Fallbacks")));
        // both A and B have ended: their caches are adopted by the allocator within its reap interval
        java.util.Map<String, Long> reaped = java.util.Map.of();
        long deadline = System.nanoTime() + 5_000_000_000L;
        do {
            reaped = BeanReads.freshAllocator("ThreadCaches", "RemoteFreesSent", "RemoteFreesAbsorbed", "LiveBuffers",
                    "BytesInUse", "BytesReserved", "Chunks");
        } while (!reaped.isEmpty() && reaped.get("ThreadCaches") > 0 && System.nanoTime() - deadline < 0);
        System.out.println("c12: after-threads-ended " + BeanReads.format(reaped));
        if (failure != null) {
            System.out.println("c12: FAIL " + failure);
            System.exit(1);
        }
        System.out.println("c12: ok allocated=" + (HANDOFFS + LATE) + " released=" + released[0] + " held="
                + HELD_BUFFERS.size());
    }

    private static void fail(String what) {
        if (failure == null) {
            failure = what;
        }
    }
}
