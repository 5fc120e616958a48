package io.kmem4j.it;

import static io.kmem4j.it.NettyAllocatorPresetIT.NETTY;
import static io.kmem4j.it.NettyAllocatorPresetIT.NETTY_COUNTERS;
import static io.kmem4j.it.NettyAllocatorPresetIT.assertExitsCleanly;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code presets=netty-allocator} serves gRPC's relocated copy of Netty (grpc-netty-shaded,
 * {@code io.grpc.netty.shaded.io.netty}) with no other flag: {@code io.kmem4j.it.apps.GrpcUnaryApp}
 * (a gRPC server and client over loopback, gRPC's own {@code PooledByteBufAllocator}, unary calls of
 * 100 B to 60 KB and a few of 200 KB) runs once without the agent and once with it (holding after
 * the run); what the program sees must be the same. Then the {@code kmem4j:type=Netty} bean must show
 * the shaded copy (with the shaded Netty's version), kmem4j's buffers for every message and HEADERS
 * frame of the small calls, the 200 KB messages left to Netty, and every served block back exactly
 * once after the channel and the server shut down: gRPC keeps none of them.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GrpcPresetIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration MBEAN_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(20);
    private static final String APP = "io.kmem4j.it.apps.GrpcUnaryApp";
    private static final String SHADED = "io.grpc.netty.shaded.io.netty";
    /** GrpcUnaryApp.CALLS: the calls whose request and response (100 B .. 60 KB) fit kmem4j's classes. */
    private static final long SMALL_CALLS = 2000;
    /** GrpcUnaryApp.LARGE_CALLS: 300,000-byte requests and responses (above nettyMaxSizeClassBytes), Netty's own. */
    private static final long LARGE_CALLS = 4;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#all")
    void grpcsShadedNettyBuffersComeFromKmem4jAndGoBackOnce(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses()) + File.pathSeparator + Artifacts.copiedJars("grpc");
        String label = "grpc-" + jdk.label();
        long start = System.nanoTime();
        AppRun plain = AppRun.run(jdk, label + "-plain", List.of(), cp, APP, RUN_TIMEOUT);
        assertThat(plain.exit()).as("exit code of %s\n%s", plain, plain.description()).isZero();
        assertThat(plain.stdout()).as("stdout of %s", plain).contains("grpc: ok");
        String nettyVersion = plain.requireLine("grpc: version=").replaceAll(".* nettyVersion=", "");

        List<String> flags = List.of(AppRun.javaagent("presets=netty-allocator"));
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, label + "-agent").jvmArgs(flags).mainClass(cp, APP)
                .programArgs("--hold").start()) {
            jvm.awaitStdoutLine("grpc: holding", RUN_TIMEOUT);
            List<String> out = jvm.stdoutLines().stream().filter(l -> !l.equals("grpc: holding"))
                    .collect(Collectors.toList());
            assertThat(out).as("what the program sees with the agent vs. without, %s\n%s", jvm, jvm.describe())
                    .isEqualTo(plain.stdout());

            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, ATTACH_TIMEOUT)) {
                jmx.awaitRegistered(NETTY, MBEAN_TIMEOUT);
                long settling = System.nanoTime();
                Map<String, Long> n = settled(jmx, jvm + " on " + jdk);
                long settled = System.nanoTime() - settling;
                List<String> copies = Arrays.asList((String[]) jmx.read(NETTY, "Copies"));
                // Each small call's request and response message (gRPC frames a message into one buffer of
                // its size, NettyWritableBufferAllocator) and its three HEADERS frames (request headers,
                // response headers, trailers; Netty's HTTP/2 writer encodes each into buffers of its own):
                // at least 5 direct buffers of 1 B .. 64 KiB per call, all of them kmem4j's.
                assertThat(n.get("Buffers")).as("buffers served to gRPC's Netty, %s, copies %s", n, copies)
                        .isGreaterThanOrEqualTo(5 * SMALL_CALLS);
                assertThat(n.get("BuffersReused")).as("released buffers served again by the event loops, %s", n)
                        .isGreaterThanOrEqualTo(SMALL_CALLS);
                assertThat(copies).as("the copies of Netty kmem4j serves").singleElement().asString()
                        .startsWith(SHADED + " " + nettyVersion + " in ").contains("Kmem4jDirectByteBuf");
                assertThat(n.get("RewrittenMethods")).as("newDirectBuffer of the shaded allocators, %s", n)
                        .isGreaterThanOrEqualTo(1);
                assertThat(n.get("Failures")).as("failures, %s", n).isZero();
                assertThat(n.get("CopiesLeftAlone")).as("copies left alone, %s", n).isZero();
                assertThat(n.get("BuffersPassed")).as("the 300,000-byte requests and responses stay Netty's, %s", n)
                        .isGreaterThanOrEqualTo(2 * LARGE_CALLS);
                jmx.awaitRegistered(NettyAllocatorPresetIT.NETTY_ALLOCATOR, MBEAN_TIMEOUT);
                assertThat(jmx.readLong(NettyAllocatorPresetIT.NETTY_ALLOCATOR, "DoubleFrees")).as("double frees")
                        .isZero();
                System.out.println(TestJdks.LOG_PREFIX + "gRPC " + plain.requireLine("grpc: version=") + " JDK "
                        + jdk.version() + ": netty=" + n + " (settled in " + Duration.ofNanos(settled).toMillis()
                        + " ms) copies=" + copies);
            }
            jvm.closeStdin();
            assertExitsCleanly(jvm, plain);
        }
        System.out.println(TestJdks.LOG_PREFIX + "gRPC JDK " + jdk.version() + ": plain run "
                + plain.wallMillis() + " ms, whole test " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
    }

    /**
     * The Netty counters once every served block is back: Releases == Buffers + Grown (each block
     * served, at allocation or on growth, released exactly once; a block still held would make it
     * smaller, a double release larger). The app awaited its channel's and server's termination before
     * it held, and so far every run had all blocks back by then (the first read matches); the wait
     * only spares the test a connection whose event loop frees its last buffer just after that.
     */
    private static Map<String, Long> settled(JmxClient jmx, String target) {
        AtomicReference<Map<String, Long>> last = new AtomicReference<>();
        await("every block kmem4j served to gRPC's Netty back in " + target).atMost(SETTLE_TIMEOUT)
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(200)).pollInSameThread()
                .untilAsserted(() -> {
                    Map<String, Long> n = jmx.readLongs(NETTY, NETTY_COUNTERS);
                    last.set(n);
                    assertThat(n.get("Releases")).as("every served block back once, %s", n)
                            .isEqualTo(n.get("Buffers") + n.get("Grown"));
                });
        return last.get();
    }
}
