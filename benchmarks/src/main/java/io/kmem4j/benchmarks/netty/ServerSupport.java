package io.kmem4j.benchmarks.netty;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * What the servers of {@code benchmarks/run --netty} share ({@link NettyHttpServer} on plain Netty,
 * {@link GrpcUnaryServer} on gRPC's relocated Netty): the answer sizes, the bytes answers are copied
 * from, the stdin command loop and the {@code server: metrics} line. JDK classes only, so that it runs
 * on either server's class path.
 */
final class ServerSupport {
    /** Size of a {@code small} answer. */
    static final int SMALL = 256;
    /** The {@code mixed} sizes: 100 entries, shuffled with a fixed seed, the same for every run. */
    static final int[] MIXED = mixed();
    /** What answers are copied from: random bytes, as long as the largest answer. */
    static final byte[] PATTERN = pattern(Math.max(SMALL, java.util.Arrays.stream(MIXED).max().orElse(0)));

    private ServerSupport() {
    }

    /** @return the event-loop threads of a server's arguments, {@code [--threads N]} (default 1) */
    static int threads(final String[] args) {
        int threads = 1;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--threads") && i + 1 < args.length) {
                threads = Integer.parseInt(args[++i]);
            } else {
                throw new IllegalArgumentException("unknown argument " + args[i] + "; usage: [--threads N]");
            }
        }
        return threads;
    }

    /**
     * Reads stdin to its end; each line {@code metrics LABEL} prints a metrics line (by {@code metrics}).
     */
    static void serveCommands(final Consumer<String> metrics) throws IOException {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.startsWith("metrics ")) {
                metrics.accept(line.substring("metrics ".length()).trim());
            }
        }
    }

    /** @return the JVM's garbage collectors' names, separated by {@code ,} */
    static String gcNames() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
            .collect(Collectors.joining(","));
    }

    /**
     * Prints one line of figures: the server's allocator's and Netty's direct memory (as the caller read
     * them from its Netty), the JDK's direct buffers, GC, uploads, errors, and kmem4j's beans when present.
     *
     * @param allocatorUsedDirect {@code usedDirectMemory()} of the channels' allocator, -1 when it has no metric
     * @param nettyUsedDirect     Netty's {@code PlatformDependent.usedDirectMemory()}
     */
    static void metrics(final String label, final long allocatorUsedDirect, final long nettyUsedDirect,
                        final long uploads, final long errors) {
        final StringBuilder b = new StringBuilder("server: metrics label=").append(label);
        b.append(" allocatorUsedDirect=").append(allocatorUsedDirect);
        b.append(" nettyUsedDirect=").append(nettyUsedDirect);
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                b.append(" jdkDirectCount=").append(pool.getCount()).append(" jdkDirectBytes=").append(pool.getMemoryUsed());
            }
        }
        long gcCount = 0;
        long gcMillis = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        b.append(" gcCount=").append(gcCount).append(" gcMillis=").append(gcMillis)
            .append(" uploads=").append(uploads).append(" errors=").append(errors);
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        kmem4j(server, b, "kmem4j:type=Netty,*", "Buffers", "BuffersPassed", "Grown", "Releases", "Failures");
        kmem4j(server, b, "kmem4j:type=Allocator,*", "Allocations", "Fallbacks", "LiveBuffers", "BytesInUse",
            "PeakBytesInUse", "BytesReserved", "Chunks", "ChunksAllocated", "ChunksReleased", "MagazineHitRate",
            "LeaksDetected");
        System.out.println(b);
    }

    private static void kmem4j(final MBeanServer server, final StringBuilder b, final String pattern,
                               final String... attributes) {
        try {
            for (final ObjectName name : server.queryNames(new ObjectName(pattern), null)) {
                for (final String attribute : attributes) {
                    b.append(" kmem4j.").append(attribute).append('=').append(server.getAttribute(name, attribute));
                }
            }
        } catch (final Exception e) {
            b.append(" kmem4jError=").append(e.getClass().getSimpleName());
        }
    }

    /** 100 sizes: 40 x 256 B, 25 x 2 KiB, 15 x 8 KiB, 10 x 24 KiB, 8 x 60 KiB, 2 x 200 KiB, shuffled (seed 42). */
    private static int[] mixed() {
        final List<Integer> sizes = new ArrayList<>();
        final int[][] mix = {{256, 40}, {2048, 25}, {8192, 15}, {24_576, 10}, {61_440, 8}, {204_800, 2}};
        for (final int[] m : mix) {
            sizes.addAll(Collections.nCopies(m[1], m[0]));
        }
        Collections.shuffle(sizes, new Random(42));
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    private static byte[] pattern(final int size) {
        final byte[] p = new byte[size];
        new Random(7).nextBytes(p);
        return p;
    }
}
