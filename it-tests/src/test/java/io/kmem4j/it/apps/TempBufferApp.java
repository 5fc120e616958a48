package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The JDK's own temporary direct buffers (field case C6); run it with
 * {@code -Djdk.nio.maxCachedBufferSize=0} so that every write of a heap buffer to a channel takes a
 * temporary direct buffer with {@code allocateDirect} and frees it with its cleaner (JDK 17/21).
 *
 * <p>Writes a 512 KiB heap buffer {@value #WRITES} times to a {@code FileChannel} (positional, so the
 * file stays 512 KiB), then {@value #WRITES} heap buffers of sizes between 1 B and 64 KiB; reads the file
 * back. Prints {@code c6: ok writes=..} and the allocator bean's counters, if registered; any exception
 * is printed as {@code c6: FAIL ..} (exit 1).
 */
public final class TempBufferApp {

    static final int WRITES = 10_000;
    private static final int LARGE = 512 * 1024;
    private static final int[] SMALL_SIZES = {1, 63, 64, 100, 1000, 4096, 4097, 16_384, 40_000, 65_535, 65_536};

    private TempBufferApp() {
    }

    public static void main(String[] args) throws Exception {
        BeanReads.awaitAllocator(5000);
        Path file = Files.createTempFile("c6-", ".bin");
        long bytes = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer large = ByteBuffer.allocate(LARGE);
            for (int i = 0; i < LARGE; i++) {
                large.put(i, (byte) (i * 7));
            }
            for (int i = 0; i < WRITES; i++) {
                large.clear();
                while (large.hasRemaining()) {
                    bytes += ch.write(large, large.position());
                }
            }
            System.out.println("c6: large writes=" + WRITES + " size=" + LARGE + " "
                    + BeanReads.format(BeanReads.freshAllocator("Allocations", "Frees", "LiveBuffers", "Fallbacks")));
            for (int i = 0; i < WRITES; i++) {
                int size = SMALL_SIZES[i % SMALL_SIZES.length];
                ByteBuffer small = ByteBuffer.allocate(size);
                small.put(0, (byte) i);
                while (small.hasRemaining()) {
                    bytes += ch.write(small, small.position());
                }
            }
            ByteBuffer back = ByteBuffer.allocate(LARGE);
            while (back.hasRemaining() && ch.read(back, back.position()) >= 0) {
                // positional reads until full
            }
            // the small writes covered at most the first 64 KiB; the rest is still the large pattern
            for (int i = 65_536; i < LARGE; i++) {
                if (back.get(i) != (byte) (i * 7)) {
                    System.out.println("c6: FAIL file content differs at " + i);
                    System.exit(1);
                }
            }
        } catch (Throwable t) {
            System.out.println("c6: FAIL " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        } finally {
            Files.deleteIfExists(file);
        }
        System.out.println("c6: ok writes=" + 2 * WRITES + " bytes=" + bytes);
        System.out.println("c6: counters " + BeanReads.format(BeanReads.freshAllocator("Allocations", "Frees",
                "ExplicitFrees", "GcFrees", "LiveBuffers", "BytesInUse", "BytesReserved", "DoubleFrees", "Fallbacks")));
    }
}
