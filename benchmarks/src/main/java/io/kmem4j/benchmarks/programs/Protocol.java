package io.kmem4j.benchmarks.programs;

import java.util.Arrays;
import java.util.List;

/**
 * The servers of {@code benchmarks/run --netty}: what differs between the HTTP/1.1 server on plain Netty
 * and the gRPC unary server on gRPC's relocated Netty (the server's class, how an arm picks Netty's
 * allocator, which allocator class each arm's server must report, the burst's upload). The load
 * generators are made by {@link NettyCommand}, which has their options.
 */
enum Protocol {
    HTTP("http", "HTTP/1.1", "io.kmem4j.benchmarks.netty.NettyHttpServer", BurstClient.HTTP),
    GRPC("grpc", "gRPC unary", "io.kmem4j.benchmarks.netty.GrpcUnaryServer", new GrpcUpload());

    /** The name in {@code --protocol}. */
    final String option;
    /** How tables name it. */
    final String label;
    final String serverClass;
    final BurstClient.Upload upload;

    Protocol(final String option, final String label, final String serverClass, final BurstClient.Upload upload) {
        this.option = option;
        this.label = label;
        this.serverClass = serverClass;
        this.upload = upload;
    }

    /** @return the names of {@code --protocol} */
    static List<String> options() {
        return Arrays.stream(values()).map(p -> p.option).toList();
    }

    /** @return the protocol of a {@code --protocol} name */
    static Protocol of(final String option) {
        return Arrays.stream(values()).filter(p -> p.option.equals(option)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("unknown protocol " + option + "; known: " + options()));
    }

    /**
     * @param arm {@code pooled} or {@code adaptive}
     * @return the JVM flags that give the server that Netty allocator. HTTP: Netty's
     *     {@code io.netty.allocator.type}. gRPC: {@code pooled} is gRPC's default, its own
     *     {@code PooledByteBufAllocator} (no flag); {@code adaptive} turns gRPC's own allocator off, so that the
     *     channels get the shaded Netty's default allocator, and makes that adaptive. The shading relocated the
     *     names of both properties ({@code io.grpc.netty.useCustomAllocator} is read as
     *     {@code io.grpc.netty.shaded.io.grpc.netty.useCustomAllocator}).
     */
    List<String> allocatorFlags(final String arm) {
        if (this == HTTP) {
            return List.of("-Dio.netty.allocator.type=" + arm);
        }
        return arm.equals("adaptive") ? List.of("-Dio.grpc.netty.shaded.io.grpc.netty.useCustomAllocator=false",
            "-Dio.grpc.netty.shaded.io.netty.allocator.type=adaptive") : List.of();
    }

    /**
     * @return the simple class name of the allocator the server must report in its {@code allocator=} for
     *     the arm, or null when any will do (HTTP: not checked; its kmem4j arm keeps the Netty version's own
     *     default). gRPC: {@code PooledByteBufAllocator} for {@code pooled} and {@code kmem4j} (gRPC's own,
     *     whose direct buffers the agent serves), {@code AdaptiveByteBufAllocator} for {@code adaptive}.
     */
    String expectedAllocator(final String arm) {
        if (this == HTTP) {
            return null;
        }
        return arm.equals("adaptive") ? "AdaptiveByteBufAllocator" : "PooledByteBufAllocator";
    }
}
