package io.kmem4j.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A plain program for a dynamic attach (issue 4, part 3): it allocates and holds direct buffers
 * before anyone attaches, keeps a churn thread allocating and releasing all the time (so the attach
 * races live allocations), and then follows commands read line by line from stdin:
 * <ul>
 *   <li>{@code new}: allocate {@value #COUNT} more buffers of {@value #SIZE} bytes, check they are
 *       zero-filled, write a pattern;</li>
 *   <li>{@code check}: verify every pattern, of the old buffers through their views too;</li>
 *   <li>{@code stop-churn}: stop the churn thread;</li>
 *   <li>{@code release-old}: release the first half of the old buffers with
 *       {@code Unsafe.invokeCleaner}, drop the other half and run GC until the JDK's direct pool
 *       shows them freed;</li>
 *   <li>{@code release-new}: release the new buffers with {@code Unsafe.invokeCleaner};</li>
 *   <li>{@code exit} (or end of input).</li>
 * </ul>
 * Each command prints one {@code attach-app: <command> ...} line with {@code key=value} figures; a
 * broken contract prints {@code attach-app: FAIL ...} and exits 1. {@value #SIZE} bytes is served by
 * the size class 49152 with kmem4j's default classes, which nothing else in this program uses.
 */
public final class AttachTargetApp {

    public static final int SIZE = 45_000;
    public static final int COUNT = 16;
    static final int CHURN_SIZE = 3000;

    private static final List<ByteBuffer> OLD = new ArrayList<>();
    private static final List<ByteBuffer> OLD_VIEWS = new ArrayList<>();
    private static final List<ByteBuffer> NEW = new ArrayList<>();
    private static volatile boolean churning = true;
    private static volatile String churnFailure;

    private AttachTargetApp() {
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < COUNT; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            fill(b, i);
            OLD.add(b);
            OLD_VIEWS.add(i % 2 == 0 ? b.duplicate() : b.slice(8, SIZE - 8));
        }
        long[] churned = new long[1];
        Thread churn = new Thread(() -> churn(churned), "attach-app-churn");
        churn.start();
        System.out.println("attach-app: ready old=" + COUNT + " size=" + SIZE + " " + BeanReads.format(BeanReads.directPool()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = in.readLine(); command != null && !command.equals("exit"); command = in.readLine()) {
            switch (command) {
                case "new" -> allocateNew();
                case "check" -> check();
                case "stop-churn" -> {
                    churning = false;
                    churn.join();
                    if (churnFailure != null) {
                        fail(churnFailure);
                    }
                    System.out.println("attach-app: stop-churn ops=" + churned[0]);
                }
                case "release-old" -> releaseOld();
                case "release-new" -> {
                    NEW.forEach(Cleaners::invokeCleaner);
                    System.out.println("attach-app: release-new released=" + NEW.size());
                    NEW.clear();
                }
                default -> fail("unknown command " + command);
            }
        }
        churning = false;
        churn.join();
        System.out.println("attach-app: exit");
    }

    private static void allocateNew() {
        for (int i = 0; i < COUNT; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            for (int j = 0; j < SIZE; j += 8) {
                if (b.get(j) != 0) {
                    fail("new buffer " + i + " is not zero-filled at " + j);
                }
            }
            fill(b, 1000 + i);
            NEW.add(b);
        }
        System.out.println("attach-app: new allocated=" + COUNT);
    }

    private static void check() {
        for (int i = 0; i < OLD.size(); i++) {
            verify(OLD.get(i), i, 0, "old buffer " + i);
            verify(OLD_VIEWS.get(i), i, i % 2 == 0 ? 0 : 8, "view of old buffer " + i);
            OLD.get(i).put(0, pattern(i, 0)); // still writable
        }
        for (int i = 0; i < NEW.size(); i++) {
            verify(NEW.get(i), 1000 + i, 0, "new buffer " + i);
        }
        System.out.println("attach-app: check ok old=" + OLD.size() + " new=" + NEW.size());
    }

    /**
     * Half the old buffers released explicitly, half dropped and collected; the JDK's direct pool must
     * give back exactly their bytes. kmem4j chunks that came or went meanwhile (BytesReserved) are
     * taken out of the pool's figures.
     */
    private static void releaseOld() throws Exception {
        Map<String, Long> poolBefore = BeanReads.directPool();
        long reservedBefore = BeanReads.freshAllocator("BytesReserved").getOrDefault("BytesReserved", 0L);
        int explicit = OLD.size() / 2;
        for (int i = 0; i < explicit; i++) {
            Cleaners.invokeCleaner(OLD.get(i));
        }
        int dropped = OLD.size() - explicit;
        OLD.clear();
        OLD_VIEWS.clear();
        long expectedBytes = (long) (explicit + dropped) * SIZE;
        long deadline = System.nanoTime() + 10_000_000_000L;
        long freedBytes;
        long freedCount;
        long reservedAfter;
        do {
            System.gc();
            Thread.sleep(50);
            Map<String, Long> poolAfter = BeanReads.directPool();
            reservedAfter = BeanReads.allocator("BytesReserved").getOrDefault("BytesReserved", 0L);
            freedBytes = poolBefore.get("MemoryUsed") - poolAfter.get("MemoryUsed") + (reservedAfter - reservedBefore);
            freedCount = poolBefore.get("Count") - poolAfter.get("Count");
        } while (freedBytes < expectedBytes && System.nanoTime() - deadline < 0);
        reservedAfter = BeanReads.freshAllocator("BytesReserved").getOrDefault("BytesReserved", 0L);
        freedBytes = poolBefore.get("MemoryUsed") - BeanReads.directPool().get("MemoryUsed") + (reservedAfter - reservedBefore);
        System.out.println("attach-app: release-old explicit=" + explicit + " dropped=" + dropped + " poolBytesFreed="
                + freedBytes + " expected=" + expectedBytes + " poolCountFreed=" + freedCount);
    }

    /** Allocates, writes, verifies and releases small buffers until told to stop (1 ms pause per 64). */
    private static void churn(long[] ops) {
        long n = 0;
        try {
            while (churning) {
                for (int k = 0; k < 64; k++, n++) {
                    ByteBuffer b = ByteBuffer.allocateDirect(CHURN_SIZE);
                    if (b.getLong(0) != 0 || b.get(CHURN_SIZE - 1) != 0) {
                        churnFailure = "churn buffer " + n + " is not zero-filled";
                    }
                    b.putLong(0, n).put(CHURN_SIZE - 1, (byte) n);
                    if (b.getLong(0) != n || b.get(CHURN_SIZE - 1) != (byte) n) {
                        churnFailure = "churn buffer " + n + " lost what was written";
                    }
                    Cleaners.invokeCleaner(b);
                }
                Thread.sleep(1);
            }
        } catch (Throwable t) {
            churnFailure = "churn failed after " + n + " buffers: " + t;
        }
        ops[0] = n;
    }

    private static void fill(ByteBuffer b, int salt) {
        for (int j = 0; j < b.capacity(); j++) {
            b.put(j, pattern(salt, j));
        }
    }

    private static void verify(ByteBuffer b, int salt, int offset, String what) {
        for (int j = 0; j < b.capacity(); j++) {
            if (b.get(j) != pattern(salt, j + offset)) {
                fail(what + " lost its contents at " + j);
            }
        }
    }

    private static byte pattern(int salt, int j) {
        return (byte) (salt * 131 + j * 31 + (j >>> 8));
    }

    private static void fail(String what) {
        System.out.println("attach-app: FAIL " + what);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }
}
