package io.kmem4j.it.apps;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Information safety (issue #8, part 4) as an ordinary program that knows nothing about any agent.
 *
 * <p>For each kind of buffer that is not a live root from {@code allocateDirect} -- a heap buffer, a
 * direct buffer above 64 KiB, {@code allocateDirect(0)}, {@code FileChannel.map} of a temporary file
 * and of 0 bytes, the read-only view, slice, duplicate, {@code alignedSlice(8)}, zero-capacity slice
 * and {@code asLongBuffer()} of a live 4096-byte buffer, and a 4096-byte buffer released earlier
 * whose block may now serve another buffer -- it calls {@code Unsafe.invokeCleaner} and
 * {@code ((DirectBuffer) b).cleaner().clean()} (needs {@code --add-exports} of
 * {@code java.base/sun.nio.ch} and of the cleaner type's package, {@code Cleaners#cleanerCleanExports})
 * and prints what happened:
 * <pre>
 *   info-safety: &lt;kind&gt; invokeCleaner -&gt; ok | &lt;exception class&gt;: &lt;message&gt;
 *   info-safety: &lt;kind&gt; cleaner().clean() -&gt; cleaned | cleaner=null | not a DirectBuffer | &lt;exception&gt;
 * </pre>
 * After every call the live buffer and the buffer on the released block must still hold their
 * patterns. Then {@value #DISTINCT} buffers of sizes around every size-class boundary and of random
 * sizes are allocated, each all zeros when fresh, each given a distinct pattern; all are verified
 * after all were written (no byte of one shows in another), and released.
 *
 * <p>stdout is deterministic but for the {@code info-safety: counters ...} line (the allocator bean's
 * figures, empty without an agent); it ends with {@code info-safety: ok ...}, or {@code FAIL} lines
 * and exit code 1.
 */
public final class ForeignReleaseApp {

    static final int SIZE = 4096;
    static final int DISTINCT = 1000;
    private static final int MAX_FAIL_LINES = 40;

    private static int failures;
    private static long checks;

    private ForeignReleaseApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        Path dir = Files.createTempDirectory("kmem4j-info-safety");
        ByteBuffer ours = ByteBuffer.allocateDirect(SIZE);
        fillPattern(ours, 1);
        List<String> kinds = new ArrayList<>();
        kinds.add(both("heap", () -> ByteBuffer.allocate(SIZE), ours));
        kinds.add(both("direct-100000", () -> ByteBuffer.allocateDirect(100_000), ours));
        kinds.add(both("direct-0", () -> ByteBuffer.allocateDirect(0), ours));
        kinds.add(both("mapped-4096", () -> map(dir, SIZE), ours));
        kinds.add(both("mapped-0", () -> map(dir, 0), ours));
        kinds.add(both("read-only-view", ours::asReadOnlyBuffer, ours));
        kinds.add(both("slice", () -> ours.slice(64, 1024), ours));
        kinds.add(both("duplicate", ours::duplicate, ours));
        kinds.add(both("alignedSlice(8)", () -> ours.duplicate().position(3).alignedSlice(8), ours));
        kinds.add(both("zero-capacity-slice", () -> ours.slice(SIZE, 0), ours));
        kinds.add(both("asLongBuffer", ours::asLongBuffer, ours));
        kinds.add(released("released", ours));
        distinctPatterns();
        verify(ours, 1, "the live buffer at the end");
        Cleaners.invokeCleaner(ours);
        System.out.println("info-safety: counters " + BeanReads.format(BeanReads.freshAllocator("Allocations", "Frees",
                "LiveBuffers", "DoubleFrees", "InterceptorFailures", "Fallbacks")));
        if (failures > 0) {
            System.out.println("info-safety: FAIL failures=" + failures + " checks=" + checks);
            System.out.flush();
            System.exit(1);
        }
        System.out.println("info-safety: ok kinds=" + kinds.size() + " distinct=" + DISTINCT + " checks=" + checks);
    }

    /** Both release paths on a fresh instance of the kind each; the live buffer must stay intact. */
    private static String both(String kind, Supplier<Object> make, ByteBuffer ours) {
        Object a = make.get();
        System.out.println("info-safety: " + kind + " invokeCleaner -> " + invokeCleaner(a));
        verify(ours, 1, kind + " after invokeCleaner");
        Object b = make.get();
        System.out.println("info-safety: " + kind + " cleaner().clean() -> " + Cleaners.cleanerClean(b));
        verify(ours, 1, kind + " after cleaner().clean()");
        return kind;
    }

    /**
     * A buffer released, then a new one of its size (which may get the same block), then the first
     * released again by each path: the new one must keep its pattern.
     */
    private static String released(String kind, ByteBuffer ours) {
        for (int path = 0; path < 2; path++) {
            ByteBuffer old = ByteBuffer.allocateDirect(SIZE);
            fillPattern(old, 3);
            Cleaners.invokeCleaner(old);
            ByteBuffer reuser = ByteBuffer.allocateDirect(SIZE);
            checkZero(reuser, kind + " reuser");
            fillPattern(reuser, 2);
            String outcome = path == 0 ? invokeCleaner(old) : Cleaners.cleanerClean(old);
            System.out.println("info-safety: " + kind + (path == 0 ? " invokeCleaner -> " : " cleaner().clean() -> ")
                    + outcome);
            verify(reuser, 2, kind + " buffer allocated after the release");
            verify(ours, 1, kind + " live buffer");
            Cleaners.invokeCleaner(reuser);
        }
        return kind;
    }

    private static String invokeCleaner(Object buffer) {
        if (!(buffer instanceof ByteBuffer)) {
            return "not a ByteBuffer: " + buffer.getClass().getSuperclass().getSimpleName();
        }
        try {
            Cleaners.invokeCleaner((ByteBuffer) buffer);
            return "ok";
        } catch (RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    private static ByteBuffer map(Path dir, int size) {
        try {
            Path file = Files.createTempFile(dir, "map", ".bin");
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                return ch.map(FileChannel.MapMode.READ_WRITE, 0, size); // the mapping outlives the channel
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * {@value #DISTINCT} buffers (sizes around every size-class boundary and random sizes up to 70,000):
     * each all zeros when fresh, each filled with its own pattern, all verified at the end, released.
     */
    private static void distinctPatterns() {
        List<Integer> boundaries = ConformanceApp.sizes();
        List<ByteBuffer> live = new ArrayList<>();
        long seed = 0x2545F4914F6CDD1DL;
        for (int i = 0; i < DISTINCT; i++) {
            int size;
            if (i % 2 == 0) {
                size = boundaries.get((i / 2) % boundaries.size());
            } else {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                size = 1 + (int) ((seed >>> 33) % 70_000);
            }
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            checkZero(b, "distinct buffer " + i + " of " + size + " bytes");
            fillPattern(b, 100 + i);
            live.add(b);
        }
        for (int i = 0; i < DISTINCT; i++) {
            verify(live.get(i), 100 + i, "distinct buffer " + i);
        }
        live.forEach(Cleaners::invokeCleaner);
    }

    private static byte pattern(long id, int index) {
        return (byte) (id * 31 + index * 7 + (id >>> 8));
    }

    private static void fillPattern(ByteBuffer b, long id) {
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, pattern(id, i));
        }
    }

    private static void verify(ByteBuffer b, long id, String what) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != pattern(id, i)) {
                check(false, what + ": byte " + i + " is not its own");
                return;
            }
        }
        check(true, what);
    }

    private static void checkZero(ByteBuffer b, String what) {
        for (int i = 0; i < b.capacity(); i++) {
            if (b.get(i) != 0) {
                check(false, what + ": not zero at " + i);
                return;
            }
        }
        check(true, what);
    }

    private static void check(boolean ok, String what) {
        checks++;
        if (!ok && ++failures <= MAX_FAIL_LINES) {
            System.out.println("info-safety: FAIL " + what);
        }
    }
}
