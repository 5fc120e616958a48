package io.kmem4j.it.apps;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The allocator bean (if registered) and the JDK's direct pool, read every few milliseconds on a
 * daemon thread ({@code memory-sampler}), each sample tagged with the phase the program is in:
 * {@code BytesReserved}, {@code BytesInUse}, the live set as the slabs hold it
 * ({@link BeanReads#liveObjectBytes()}), the pool's {@code MemoryUsed} and {@code Chunks}.
 */
public final class MemorySamples {
    private final List<String> rows = new ArrayList<>();
    private final Map<String, List<long[]>> byPhase = new LinkedHashMap<>();
    private final Thread thread;
    private final long startNanos = System.nanoTime();
    private volatile String phase = "start";
    private volatile boolean stopped;

    private final Consumer<String> failure;

    private MemorySamples(long intervalMillis, Consumer<String> failure) {
        this.failure = failure;
        thread = new Thread(() -> {
            while (!stopped) {
                try {
                    sample();
                    Thread.sleep(intervalMillis);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    failure.accept("memory sampler: " + e);
                    return;
                }
            }
        }, "memory-sampler");
        thread.setDaemon(true);
    }

    /**
     * Starts sampling every {@code intervalMillis}.
     *
     * @param failure told if a read fails (the sampler then stops)
     */
    static MemorySamples start(long intervalMillis, Consumer<String> failure) {
        MemorySamples s = new MemorySamples(intervalMillis, failure);
        s.thread.start();
        return s;
    }

    void phase(String name) {
        phase = name;
    }

    void stop() throws InterruptedException {
        stopped = true;
        thread.join();
    }

    private void sample() throws Exception {
        String p = phase;
        Map<String, Long> a = BeanReads.allocator("BytesReserved", "BytesInUse", "Chunks");
        long live = a.isEmpty() ? 0 : BeanReads.liveObjectBytes();
        long pool = BeanReads.directPool().get("MemoryUsed");
        long[] v = {a.getOrDefault("BytesReserved", 0L), a.getOrDefault("BytesInUse", 0L), live, pool,
            a.getOrDefault("Chunks", 0L)};
        long millis = (System.nanoTime() - startNanos) / 1_000_000;
        synchronized (this) {
            StringBuilder row = new StringBuilder().append(millis).append(',').append(p);
            for (long x : v) {
                row.append(',').append(x);
            }
            rows.add(row.toString());
            byPhase.computeIfAbsent(p, k -> new ArrayList<>()).add(v);
        }
    }

    /**
     * {@code samples=.. maxReserved=.. maxInUse=.. maxLiveObjectBytes=.. maxPool=.. thirds=a/b/c}, the
     * last being the largest {@code BytesReserved} of each third of the phase's samples.
     */
    synchronized String summary(String p) {
        List<long[]> s = byPhase.getOrDefault(p, List.of());
        long[] max = new long[4];
        for (long[] v : s) {
            for (int i = 0; i < max.length; i++) {
                max[i] = Math.max(max[i], v[i]);
            }
        }
        StringBuilder thirds = new StringBuilder();
        for (int third = 0; third < 3; third++) {
            long m = 0;
            for (int i = third * s.size() / 3; i < (third + 1) * s.size() / 3; i++) {
                m = Math.max(m, s.get(i)[0]);
            }
            thirds.append(third == 0 ? "" : "/").append(m);
        }
        return "samples=" + s.size() + " maxReserved=" + max[0] + " maxInUse=" + max[1] + " maxLiveObjectBytes="
                + max[2] + " maxPool=" + max[3] + " thirds=" + thirds;
    }

    synchronized void writeCsv(Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("millis,phase,bytesReserved,bytesInUse,liveObjectBytes,jdkDirectPoolMemoryUsed,chunks");
        lines.addAll(rows);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.write(file, lines);
    }
}
