package io.kmem4j.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Memory: a burst to {@value #BUFFERS} live buffers of the {@link SizeMix} sizes, then idle; how much
 * memory the process holds for them, as ratios to the bytes the buffers ask for.
 *
 * <p><b>Workload.</b> One fork per allocator, one single-shot invocation: the burst allocates the
 * buffers on one thread and keeps them. The trial's tear-down then idles {@value #IDLE_MILLIS} ms
 * (two kmem4j reaper intervals), reads the process's {@code VmRSS} (from {@code /proc/self/status})
 * and the allocator's reserved bytes, releases every buffer, idles again and reads both once more.
 * RSS is counted from a baseline read after the allocator was created and before the burst. The
 * fork's heap is small and pre-touched ({@code -Xms256m -Xmx256m -XX:+AlwaysPreTouch}), so heap
 * objects do not move RSS: what moves it is off-heap memory (and a little class and code memory).
 *
 * <p>Reserved bytes: {@code jdk}: the JDK's {@code direct} buffer pool; {@code kmem4j*}: chunk memory
 * ({@code BytesReserved}); Netty: the allocator's {@code usedDirectMemory} (its chunks);
 * {@code unsafe}: not known (malloc's own).
 *
 * <p><b>Units.</b> The score is the burst's time (ms, a cold JVM: mostly interpreter and JIT, not
 * comparable to the other workloads); the figures that matter are on the statistics line:
 * {@code liveBytes}, {@code rssBytes}, {@code reservedBytes}, and the same after release.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsAppend = {
    Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.SMALL_XMS, Jvm.SMALL_XMX, Jvm.PRE_TOUCH, Jvm.MEMORY_MAX_DIRECT,
    Jvm.NETTY_NO_LEAK_DETECTION})
public class MemoryBenchmark {
    /** Live buffers after the burst (about 43 MB of the size mix). */
    static final int BUFFERS = 1 << 17;
    static final long IDLE_MILLIS = 2500;

    /** The allocator and the burst's buffers. */
    @State(Scope.Thread)
    public static class AllocatorState {
        /** Flavour name, see {@link Flavour} ({@code floor} pre-allocates everything: not measured). */
        @Param({"jdk", "kmem4jAgent", "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "unsafe"})
        public String allocator;

        Flavour flavour;
        Ring ring;
        final int[] sizes = SizeMix.sizes();
        long liveBytes;
        long rssBefore;

        @Setup(Level.Trial)
        public void setUp() {
            flavour = Flavour.create(allocator, SizeMix.MAX_BYTES, 1, BUFFERS);
            ring = flavour.newRing(BUFFERS);
            for (int i = 0; i < BUFFERS; i++) {
                liveBytes += sizes[i & SizeMix.MASK];
            }
            rssBefore = rssBytes();
        }

        @TearDown(Level.Trial)
        public void tearDown(final BenchmarkParams params) throws InterruptedException {
            Thread.sleep(IDLE_MILLIS);
            final long rss = rssBytes() - rssBefore;
            final long reserved = flavour.reservedBytes();
            ring.releaseAll();
            Thread.sleep(IDLE_MILLIS);
            final long rssAfter = rssBytes() - rssBefore;
            final long reservedAfter = flavour.reservedBytes();
            final String s = flavour.stats();
            Flavour.printStats(params, flavour, String.format(Locale.ROOT,
                "liveBytes=%d rssBytes=%d reservedBytes=%d rssAfterReleaseBytes=%d reservedAfterReleaseBytes=%d",
                liveBytes, rss, reserved, rssAfter, reservedAfter) + (s == null ? "" : " " + s));
            flavour.close();
        }
    }

    /** @return this process's resident set, bytes ({@code VmRSS}), or -1 when unknown (not Linux). */
    static long rssBytes() {
        try {
            for (final String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (final IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    /**
     * The burst: {@value #BUFFERS} buffers of the size mix, kept live.
     *
     * @param s the allocator and its buffers
     */
    @Benchmark
    public void burst(final AllocatorState s) {
        for (int i = 0; i < BUFFERS; i++) {
            s.ring.allocate(i, s.sizes[i & SizeMix.MASK]);
        }
    }
}
