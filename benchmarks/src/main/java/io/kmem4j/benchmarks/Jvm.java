package io.kmem4j.benchmarks;

/**
 * JVM flags of every benchmark fork, as compile-time constants for {@code @Fork(jvmArgsAppend = ...)}.
 *
 * <ul>
 *   <li>{@link #ADD_EXPORTS}, {@link #ADD_OPENS}: what {@code allocator-core} needs when it runs
 *       without the agent (Agrona's {@code UnsafeApi}; the JDK's mapped-buffer constructor, also
 *       used by the {@code floor} flavour).</li>
 *   <li>A fixed 1 GiB heap, so GC behaviour (which drives the {@code jdkGc} flavour) does not
 *       depend on the machine's memory size.</li>
 *   <li>{@code MaxDirectMemorySize=3g}: the largest ring (2 threads x 8192 slots x 64 KiB) holds
 *       1 GiB; the rest is head-room for {@code jdkGc}'s unreclaimed garbage.</li>
 *   <li>Netty's leak detector off, as in Netty's own microbenchmarks (its default samples 1 buffer
 *       in 128 with a stack trace, which would measure the detector, not the allocator).</li>
 * </ul>
 */
final class Jvm {
    static final String ADD_EXPORTS = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED";
    static final String ADD_OPENS = "--add-opens=java.base/java.nio=ALL-UNNAMED";
    static final String XMS = "-Xms1g";
    static final String XMX = "-Xmx1g";
    static final String MAX_DIRECT = "-XX:MaxDirectMemorySize=3g";
    static final String NETTY_NO_LEAK_DETECTION = "-Dio.netty.leakDetection.level=disabled";

    /** Prefix of the one-line allocator statistics a fork prints at the end of each trial. */
    static final String STATS_PREFIX = "[allocator-stats]";

    private Jvm() {
    }
}
