package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.function.IntFunction;

/**
 * Loaded by {@link ChildFirstApp}'s child-first class loader (only JDK types in its signature, so it
 * can be called through {@link IntFunction} across loaders). {@code apply(n)} allocates {@code n}
 * direct buffers, verifies them, and returns a summary; it throws on the first mismatch.
 */
public final class LoadedWorker implements IntFunction<String> {

    @Override
    public String apply(int count) {
        long bytes = 0;
        long checksum = 0;
        for (int i = 0; i < count; i++) {
            int size = 1 + (i * 977) % 20_000;
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            if (!b.isDirect() || b.capacity() != size || b.limit() != size || b.position() != 0) {
                throw new IllegalStateException("buffer " + i + ": unexpected " + b);
            }
            for (int j = 0; j < size; j++) {
                if (b.get(j) != 0) {
                    throw new IllegalStateException("buffer " + i + " (capacity " + size + ") not zero at " + j);
                }
                b.put(j, (byte) (i + j));
            }
            for (int j = 0; j < size; j++) {
                if (b.get(j) != (byte) (i + j)) {
                    throw new IllegalStateException("buffer " + i + " (capacity " + size + ") lost data at " + j);
                }
                checksum += b.get(j) & 0xff;
            }
            bytes += size;
        }
        return "buffers=" + count + " bytes=" + bytes + " checksum=" + checksum;
    }
}
