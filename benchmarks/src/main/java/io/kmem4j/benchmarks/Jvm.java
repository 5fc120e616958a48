package io.kmem4j.benchmarks;

/**
 * JVM flags of every benchmark fork, as compile-time constants for {@code @Fork(jvmArgsAppend = ...)}.
 *
 * <ul>
 *   <li>{@link #ADD_EXPORTS}, {@link #ADD_OPENS}, {@link #ADD_OPENS_REF}: what {@code allocator-core} needs when it runs
 *       without the agent (Agrona's {@code UnsafeApi}; the JDK's mapped-buffer constructor, also
 *       used by the {@code floor} flavour).</li>
 *   <li>A fixed 1 GiB heap, so GC behaviour (which drives {@link GcOnlyBenchmark}) does not
 *       depend on the machine's memory size, touched when the JVM starts ({@link #PRE_TOUCH}): otherwise
 *       the first passes of allocation through the young generation fault its pages in during the
 *       trial, one page fault per 4 KiB of heap, and on a host that backs new memory slowly (11 µs
 *       per fault measured on 2026-12-04) the first 3-4 s of every fork ran 3-6x slower than the
 *       rest, whatever the allocator, and the first measured iteration with them.</li>
 *   <li>{@code MaxDirectMemorySize=3g}: the largest ring (2 threads x 8192 slots x 64 KiB) holds
 *       1 GiB; the rest is head-room for the other benchmarks' churn ({@link GcOnlyBenchmark} has a limit of its own).</li>
 *   <li>Netty's leak detector off, as in Netty's own microbenchmarks (its default samples 1 buffer
 *       in 128 with a stack trace, which would measure the detector, not the allocator).</li>
 * </ul>
 * {@link GcOnlyBenchmark} runs with the JDK's default limit for its heap ({@link #GC_ONLY_MAX_DIRECT}),
 * {@link NearLimitBenchmark} with {@value #NEAR_LIMIT_MAX_DIRECT_MIB} MiB of direct memory and
 * {@link MemoryBenchmark} with a small pre-touched heap (its RSS then moves with off-heap memory only).
 */
final class Jvm {
    static final String ADD_EXPORTS = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED";
    static final String ADD_OPENS = "--add-opens=java.base/java.nio=ALL-UNNAMED";
    /**
     * The JDK cleaner's package (JDK 17-25), for the tracked flavours' owned lifecycle: their copy of
     * allocator-core builds cleaners outside the JDK's list with the agent's mark, which needs deep access
     * to {@code jdk.internal.ref.Cleaner} (on 26+ the cleaner lives in {@code java.nio}, opened above).
     */
    static final String ADD_OPENS_REF = "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED";
    static final String XMS = "-Xms1g";
    static final String XMX = "-Xmx1g";
    static final String MAX_DIRECT = "-XX:MaxDirectMemorySize=3g";
    /**
     * {@link GcOnlyBenchmark}'s limit: what the JDK gives a program with this heap and no flag under G1 (the
     * limit defaults to the maximum heap size the collector reports; Serial and Parallel report a little less), so that at 4 KiB a measurement iteration covers several
     * cycles to the limit and back.
     */
    static final String GC_ONLY_MAX_DIRECT = "-XX:MaxDirectMemorySize=1g";
    static final String PRE_TOUCH = "-XX:+AlwaysPreTouch";
    static final String NETTY_NO_LEAK_DETECTION = "-Dio.netty.leakDetection.level=disabled";

    /** {@code -XX:MaxDirectMemorySize} of {@link NearLimitBenchmark}'s forks, MiB. */
    static final int NEAR_LIMIT_MAX_DIRECT_MIB = 64;
    static final String NEAR_LIMIT_MAX_DIRECT = "-XX:MaxDirectMemorySize=" + NEAR_LIMIT_MAX_DIRECT_MIB + "m";

    /** {@link MemoryBenchmark}: a small heap, all of it resident from the start. */
    static final String SMALL_XMS = "-Xms256m";
    static final String SMALL_XMX = "-Xmx256m";
    static final String MEMORY_MAX_DIRECT = "-XX:MaxDirectMemorySize=1g";

    /** Prefix of the one-line allocator statistics a fork prints at the end of each trial. */
    static final String STATS_PREFIX = "[allocator-stats]";

    private Jvm() {
    }
}
