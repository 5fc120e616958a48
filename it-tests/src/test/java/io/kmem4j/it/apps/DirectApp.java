package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A plain program that uses direct buffers; it knows nothing about any agent.
 *
 * <ol>
 *   <li>The very first statement is {@code ByteBuffer.allocateDirect(100)}: the first direct
 *       allocation of the process (nothing before {@code main} in this class allocates one).</li>
 *   <li>Allocates {@value #BUFFERS} buffers of deterministic sizes in {@code 1..}{@value #MAX_SIZE}
 *       (small ones, every size-class boundary region and sizes above 64 KiB), checks each is direct,
 *       big-endian, zero-filled, positioned at 0 and has exactly the requested capacity, writes a
 *       pattern and reads it back; a small window of buffers stays reachable, the rest is dropped.</li>
 *   <li>A shutdown hook allocates and writes direct buffers for a while, i.e. also after an agent's
 *       own shutdown hook may have run.</li>
 * </ol>
 *
 * Every stdout line is deterministic, so runs can be compared byte for byte. Exits with 1 (and a
 * {@code direct-app: FAIL ...} line on stdout) on the first mismatch.
 */
public final class DirectApp {

    static final int BUFFERS = 10_000;
    static final int MAX_SIZE = 70_000;
    private static final int WINDOW = 32;
    private static final int HOOK_ROUNDS = 10;
    private static final int HOOK_BUFFERS_PER_ROUND = 200;

    private DirectApp() {
    }

    public static void main(String[] args) throws Exception {
        ByteBuffer first = ByteBuffer.allocateDirect(100);
        check(first, 100, "first");
        long checksum = fillAndVerify(first, 0);
        System.out.println("direct-app: first capacity=" + first.capacity() + " checksum=" + checksum);

        Runtime.getRuntime().addShutdownHook(new Thread(DirectApp::shutdownHook, "direct-app-hook"));

        ByteBuffer[] window = new ByteBuffer[WINDOW];
        long seed = 0x9E3779B97F4A7C15L;
        long bytes = 0;
        int above64k = 0;
        for (int i = 0; i < BUFFERS; i++) {
            int size;
            switch (i % 8) {
                case 0: size = 1 + (i / 8) % 64; break;                    // tiny
                case 1: size = edgeSize(i / 8); break;                      // around powers of two
                default:
                    seed = seed * 6364136223846793005L + 1442695040888963407L;
                    size = 1 + (int) ((seed >>> 33) % MAX_SIZE);
            }
            if (i == BUFFERS - 1) {
                size = MAX_SIZE;
            }
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            check(b, size, "buffer " + i);
            checksum = checksum * 31 + fillAndVerify(b, i);
            bytes += size;
            if (size > 65_536) {
                above64k++;
            }
            window[i % WINDOW] = b;
        }
        // touch the window once more: still intact after later allocations
        for (int k = 0; k < WINDOW; k++) {
            int i = BUFFERS - WINDOW + k;
            verifyPattern(window[i % WINDOW], i, "window buffer " + i);
        }
        System.out.println("direct-app: bytes=" + bytes + " above64k=" + above64k + " checksum=" + checksum);
        System.out.println("direct-app: ok buffers=" + BUFFERS);
    }

    /** Sizes just below, at and above powers of two from 8 to 65536 (and 65537). */
    private static int edgeSize(int n) {
        int shift = 3 + (n / 3) % 14;          // 8 .. 65536
        int base = 1 << shift;
        return base + (n % 3) - 1;             // base-1, base, base+1
    }

    private static void shutdownHook() {
        try {
            long checksum = 0;
            int count = 0;
            for (int round = 0; round < HOOK_ROUNDS; round++) {
                for (int j = 0; j < HOOK_BUFFERS_PER_ROUND; j++) {
                    int size = 1 + (round * 7919 + j * 104_729) % MAX_SIZE;
                    ByteBuffer b = ByteBuffer.allocateDirect(size);
                    check(b, size, "shutdown-hook buffer " + count);
                    checksum = checksum * 31 + fillAndVerify(b, count);
                    count++;
                }
                Thread.sleep(10);
            }
            System.out.println("direct-app: shutdown-hook ok buffers=" + count + " checksum=" + checksum);
        } catch (Throwable t) {
            System.out.println("direct-app: FAIL in shutdown hook: " + t);
            t.printStackTrace();
            Runtime.getRuntime().halt(3);
        }
    }

    private static void check(ByteBuffer b, int size, String what) {
        if (!b.isDirect() || b.capacity() != size || b.limit() != size || b.position() != 0
                || b.order() != ByteOrder.BIG_ENDIAN || b.isReadOnly()) {
            fail(what + ": expected a direct big-endian buffer with capacity=limit=" + size + ", got " + b
                    + " direct=" + b.isDirect() + " order=" + b.order());
        }
        int i = 0;
        for (; i + 8 <= size; i += 8) {
            if (b.getLong(i) != 0L) {
                fail(what + " (capacity " + size + ") is not zero-filled at offset " + i);
            }
        }
        for (; i < size; i++) {
            if (b.get(i) != 0) {
                fail(what + " (capacity " + size + ") is not zero-filled at offset " + i);
            }
        }
    }

    private static long fillAndVerify(ByteBuffer b, int salt) {
        int size = b.capacity();
        for (int j = 0; j < size; j++) {
            b.put(j, pattern(salt, j));
        }
        return verifyPattern(b, salt, "buffer " + salt);
    }

    private static long verifyPattern(ByteBuffer b, int salt, String what) {
        int size = b.capacity();
        long sum = 0;
        for (int j = 0; j < size; j++) {
            byte v = b.get(j);
            if (v != pattern(salt, j)) {
                fail(what + " (capacity " + size + ") lost its pattern at offset " + j);
            }
            sum += v & 0xff;
        }
        return sum;
    }

    private static byte pattern(int salt, int j) {
        return (byte) (salt * 131 + j * 31 + (j >>> 8));
    }

    private static void fail(String message) {
        System.out.println("direct-app: FAIL " + message);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }
}
