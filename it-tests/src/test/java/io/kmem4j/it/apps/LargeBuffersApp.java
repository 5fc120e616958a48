package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Allocates only direct buffers larger than kmem4j's largest size class (ten of 1 MiB), as a program
 * that keeps a few large I/O buffers does: prints {@code large: buffers=10 direct=10 bytes=10485760}.
 */
public final class LargeBuffersApp {
    private LargeBuffersApp() {
    }

    public static void main(String[] args) {
        final List<ByteBuffer> buffers = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < 10; i++) {
            final ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            b.put(0, (byte) i);
            buffers.add(b);
            bytes += b.capacity();
        }
        System.out.println("large: buffers=" + buffers.size() + " direct="
                + buffers.stream().filter(ByteBuffer::isDirect).count() + " bytes=" + bytes);
    }
}
