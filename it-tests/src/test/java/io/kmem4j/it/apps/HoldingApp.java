package io.kmem4j.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain program that allocates direct buffers of a few sizes (served by kmem4j if an agent is
 * present), waits until the allocator bean is registered when started with {@code -javaagent},
 * prints {@code holding: ready beans=true|false live=N} and keeps its buffers until stdin reaches end
 * of file. It opens no socket of its own.
 */
public final class HoldingApp {

    private HoldingApp() {
    }

    public static void main(String[] args) throws Exception {
        List<ByteBuffer> live = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            live.add(ByteBuffer.allocateDirect(64 << (i % 11)).put(0, (byte) i));
        }
        boolean beans = BeanReads.awaitAllocator(10_000);
        System.out.println("holding: ready beans=" + beans + " live=" + live.size());
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        System.out.println("holding: done check=" + live.stream().mapToInt(b -> b.get(0)).sum());
    }
}
