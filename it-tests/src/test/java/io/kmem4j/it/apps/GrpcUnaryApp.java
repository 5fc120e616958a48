package io.kmem4j.it.apps;

import io.grpc.CallOptions;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.internal.GrpcUtil;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.util.Version;
import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * A gRPC server and its client in one JVM, over loopback, on grpc-netty-shaded (gRPC's relocated copy
 * of Netty, {@code io.grpc.netty.shaded.io.netty}) with gRPC's defaults: one unary method with a
 * {@code byte[]} marshaller (no protoc). {@value #CLIENT_THREADS} client threads send {@value #CALLS}
 * requests of mixed sizes ({@link #SIZES}, 100 B to 60 KB: frames within kmem4j's size classes) and
 * {@value #LARGE_CALLS} of {@value #LARGE} bytes (past the largest class: Netty's own); the server
 * answers each with the request reversed and XOR-ed, and the client checks every byte. Prints, on
 * stdout:
 * <pre>
 * grpc: version=1.85.1 nettyVersion=4.2.17.Final
 * grpc: netty unsafe=true preferDirect=true epoll=true
 * grpc: echo ok calls=2004 large=4 bytes=... crc=...
 * grpc: shutdown ok
 * grpc: ok
 * </pre>
 * then, with {@code --hold}, {@code grpc: holding} until the end of stdin. Any failure prints
 * {@code grpc: FAIL ...} and exits 1. Client and server are shut down (and awaited) before
 * {@code grpc: ok}, so every buffer of the run has been handed back to Netty by then.
 */
public final class GrpcUnaryApp {
    static final int CALLS = 2000;
    static final int LARGE_CALLS = 4;
    static final int LARGE = 300_000;
    static final int[] SIZES = {100, 700, 2048, 8192, 24_576, 60_000};
    static final int CLIENT_THREADS = 4;
    private static final long DEADLINE_SECONDS = 30;

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value); // a known length to gRPC's framer: one buffer of that size
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> TRANSFORM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("kmem4j.it.Echo", "Transform"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private GrpcUnaryApp() {
    }

    public static void main(String[] args) throws Exception {
        try {
            System.out.println("grpc: version=" + GrpcUtil.IMPLEMENTATION_VERSION + " nettyVersion=" + nettyVersion());
            System.out.println("grpc: netty unsafe=" + PlatformDependent.hasUnsafe() + " preferDirect="
                    + PooledByteBufAllocator.defaultPreferDirect() + " epoll=" + Epoll.isAvailable());
            run();
            System.out.println("grpc: ok");
        } catch (Throwable t) {
            System.out.println("grpc: FAIL " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        }
        if (List.of(args).contains("--hold")) {
            System.out.println("grpc: holding");
            while (System.in.read() >= 0) {
                // until EOF
            }
        }
    }

    private static void run() throws Exception {
        ServerServiceDefinition service = ServerServiceDefinition.builder("kmem4j.it.Echo")
                .addMethod(TRANSFORM, ServerCalls.asyncUnaryCall((request, response) -> {
                    response.onNext(transform(request));
                    response.onCompleted();
                }))
                .build();
        Server server = NettyServerBuilder
                .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), InsecureServerCredentials.create())
                .addService(service)
                .build()
                .start();
        ManagedChannel channel = NettyChannelBuilder
                .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()),
                        InsecureChannelCredentials.create())
                .build();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENT_THREADS);
        try {
            int total = CALLS + LARGE_CALLS;
            long[] crcs = new long[total];
            long[] bytes = new long[CLIENT_THREADS];
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < CLIENT_THREADS; t++) {
                int thread = t;
                done.add(clients.submit(() -> {
                    for (int i = thread; i < total; i += CLIENT_THREADS) {
                        byte[] request = request(i);
                        byte[] response = ClientCalls.blockingUnaryCall(channel, TRANSFORM,
                                CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS), request);
                        check(i, request, response);
                        CRC32 crc = new CRC32();
                        crc.update(response);
                        crcs[i] = crc.getValue();
                        bytes[thread] += request.length + response.length;
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            CRC32 all = new CRC32();
            for (long c : crcs) {
                for (int s = 0; s < 64; s += 8) {
                    all.update((int) (c >>> s));
                }
            }
            long sum = 0;
            for (long b : bytes) {
                sum += b;
            }
            System.out.println("grpc: echo ok calls=" + total + " large=" + LARGE_CALLS + " bytes=" + sum
                    + " crc=" + all.getValue());
        } finally {
            clients.shutdown();
            channel.shutdown();
            server.shutdown();
        }
        boolean closed = channel.awaitTermination(30, TimeUnit.SECONDS) & server.awaitTermination(30, TimeUnit.SECONDS);
        if (!closed) {
            throw new AssertionError("channel or server not terminated in 30 s");
        }
        System.out.println("grpc: shutdown ok");
    }

    /**
     * The shaded Netty's version. Its {@code Version.identify()} finds nothing: it reads
     * {@code META-INF/io.netty.versions.properties}, which grpc-netty-shaded ships relocated, under the
     * name read here.
     */
    static String nettyVersion() throws IOException {
        Version unrelocated = Version.identify().get("netty-common");
        if (unrelocated != null) {
            return unrelocated.artifactVersion();
        }
        Properties p = new Properties();
        try (InputStream in = Version.class.getClassLoader()
                .getResourceAsStream("META-INF/io.grpc.netty.shaded.io.netty.versions.properties")) {
            if (in == null) {
                return "unknown";
            }
            p.load(in);
        }
        return p.getProperty("netty-common.version", "unknown");
    }

    /** Call {@code i}'s request: {@link #LARGE} bytes for the last {@value #LARGE_CALLS}, else one of {@link #SIZES}. */
    static byte[] request(int i) {
        int size = i >= CALLS ? LARGE : SIZES[i % SIZES.length] + (i % 7) * 13;
        byte[] b = new byte[size];
        new Random(i).nextBytes(b);
        return b;
    }

    /** The server's answer: the request reversed, each byte XOR 0x5A. */
    static byte[] transform(byte[] request) {
        byte[] out = new byte[request.length];
        for (int i = 0; i < request.length; i++) {
            out[i] = (byte) (request[request.length - 1 - i] ^ 0x5A);
        }
        return out;
    }

    private static void check(int call, byte[] request, byte[] response) {
        if (response.length != request.length) {
            throw new AssertionError("call " + call + ": " + response.length + " bytes back for " + request.length);
        }
        for (int i = 0; i < request.length; i++) {
            if (response[i] != (byte) (request[request.length - 1 - i] ^ 0x5A)) {
                throw new AssertionError("call " + call + ": byte " + i + " of " + request.length + " differs");
            }
        }
    }
}
