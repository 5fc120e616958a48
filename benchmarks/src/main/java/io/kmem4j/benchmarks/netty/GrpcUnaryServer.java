package io.kmem4j.benchmarks.netty;

import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.internal.GrpcUtil;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gRPC server of {@code benchmarks/run --netty --protocol=grpc}: grpc-netty-shaded (gRPC's relocated
 * copy of Netty, {@code io.grpc.netty.shaded.io.netty}) with gRPC's defaults except the transport: NIO
 * (as the HTTP server), a boss event loop and {@code --threads} worker event loops, {@code directExecutor()}
 * (the methods run on the event loops, as the HTTP server's handlers do). The harness forks it with
 * {@code benchmarks/target/classes} and {@code benchmarks/target/grpc}.
 *
 * <ul>
 *   <li>{@link GrpcMethods#SMALL} answers {@value ServerSupport#SMALL} bytes; {@link GrpcMethods#MIXED} the next
 *       size of {@link ServerSupport#MIXED} (each event loop walks the sequence). An answer is a {@code byte[]}
 *       made once per size; gRPC copies it into a buffer of the channel's allocator (its framer asks
 *       {@code buffer(n, n)} for the 5-byte prefix and the message).</li>
 *   <li>{@link GrpcMethods#UPLOAD} (the burst): gRPC holds the received DATA of a message until the whole
 *       message has arrived, then the method counts it and answers {@code ok}.</li>
 * </ul>
 *
 * <p>The allocator: gRPC gives its channels its own {@code PooledByteBufAllocator} (grpc-java's
 * {@code Utils.getByteBufAllocator}), not Netty's default, unless
 * {@code -Dio.grpc.netty.shaded.io.grpc.netty.useCustomAllocator=false} (the shading relocated the
 * property's name too); then Netty's {@code ByteBufAllocator.DEFAULT}, chosen by
 * {@code -Dio.grpc.netty.shaded.io.netty.allocator.type}. The {@code allocator=} of the first output line is
 * the class of the allocator an accepted connection really has: the server accepts one connection of its
 * own before it says it listens, and reads that channel's {@code config().getAllocator()}.
 *
 * <p>Arguments: {@code --threads N} (worker event loops, default 1). Output on stdout, as
 * {@link NettyHttpServer}'s (the upload port is the server's one port):
 * <pre>
 * server: netty=4.2.17.Final allocator=PooledByteBufAllocator grpc=1.85.1 nettyDefault=false noCleaner=true threads=1 ...
 * server: metrics label=start allocatorUsedDirect=... nettyUsedDirect=... gcCount=... uploads=... errors=... [kmem4j....]
 * server: listening port=P upload-port=P
 * </pre>
 * then a metrics line for every {@code metrics LABEL} line read from stdin, and at the end of stdin
 * {@code metrics label=end}, after which the server shuts down and exits 0. {@code errors=} counts answers
 * not sent: the call was cancelled before (grpc-java's unary observer does not throw for a cancelled
 * call, so {@code isCancelled()} is asked first) or sending threw.
 */
public final class GrpcUnaryServer {
    private static final AtomicLong UPLOADS = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final byte[] OK = GrpcMethods.UPLOAD_ANSWER.getBytes(StandardCharsets.US_ASCII);
    /** The answers, one array per size, made once (gRPC only reads them): {@code SMALL}'s, and one per entry of {@code MIXED}. */
    private static final byte[] SMALL_ANSWER = Arrays.copyOf(ServerSupport.PATTERN, ServerSupport.SMALL);
    private static final byte[][] MIXED_ANSWERS = mixedAnswers();
    private static final long PROBE_SECONDS = 30;
    /** Each event loop's place in {@link ServerSupport#MIXED}. */
    private static final ThreadLocal<int[]> NEXT = ThreadLocal.withInitial(() -> new int[1]);
    /** The allocator of the accepted channels, from {@link #probe}. */
    private static volatile ByteBufAllocator childAllocator;

    private GrpcUnaryServer() {
    }

    /** @param args {@code --threads N} */
    @SuppressWarnings("deprecation") // NioEventLoopGroup: as the HTTP server's, so that both run the same transport
    public static void main(final String[] args) throws Exception {
        final int threads = ServerSupport.threads(args);
        final EventLoopGroup boss = new NioEventLoopGroup(1);
        final EventLoopGroup workers = new NioEventLoopGroup(threads);
        final Server server = NettyServerBuilder
            .forAddress(new InetSocketAddress("127.0.0.1", 0), InsecureServerCredentials.create())
            .bossEventLoopGroup(boss).workerEventLoopGroup(workers).channelType(ProbedServerChannel.class)
            .directExecutor()
            .addService(service())
            .build()
            .start();
        try {
            childAllocator = probe(server.getPort());
            System.out.println("server: netty=" + nettyVersion() + " allocator=" + childAllocator.getClass().getSimpleName()
                + " grpc=" + GrpcUtil.IMPLEMENTATION_VERSION + " nettyDefault=" + (childAllocator == ByteBufAllocator.DEFAULT)
                + " noCleaner=" + PlatformDependent.useDirectBufferNoCleaner() + " threads=" + threads
                + " cpus=" + Runtime.getRuntime().availableProcessors() + " gc=" + ServerSupport.gcNames());
            metrics("start");
            System.out.println("server: listening port=" + server.getPort() + " upload-port=" + server.getPort());
            ServerSupport.serveCommands(GrpcUnaryServer::metrics);
            server.shutdown();
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } finally {
            server.shutdownNow();
            boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
            workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
        metrics("end");
    }

    /** @return the service: {@link GrpcMethods#SMALL}, {@link GrpcMethods#MIXED} and {@link GrpcMethods#UPLOAD} (public for the harness's tests) */
    public static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(GrpcMethods.SERVICE)
            .addMethod(GrpcMethods.SMALL, ServerCalls.asyncUnaryCall((request, answer) ->
                answer(answer, SMALL_ANSWER)))
            .addMethod(GrpcMethods.MIXED, ServerCalls.asyncUnaryCall((request, answer) -> {
                final int[] next = NEXT.get();
                answer(answer, MIXED_ANSWERS[next[0]++ % MIXED_ANSWERS.length]);
            }))
            .addMethod(GrpcMethods.UPLOAD, ServerCalls.asyncUnaryCall((request, answer) -> {
                UPLOADS.incrementAndGet();
                answer(answer, OK);
            }))
            .build();
    }

    private static void answer(final StreamObserver<byte[]> call, final byte[] message) {
        if (call instanceof io.grpc.stub.ServerCallStreamObserver<?> s && s.isCancelled()) {
            ERRORS.incrementAndGet();
            return;
        }
        try {
            call.onNext(message);
            call.onCompleted();
        } catch (final RuntimeException e) { // cancelled meanwhile
            if (ERRORS.getAndIncrement() == 0) {
                System.out.println("server: first call error (counted in errors=): " + e);
            }
        }
    }

    /** One line of figures ({@link ServerSupport#metrics}), with the accepted channels' allocator's and the shaded Netty's direct memory. */
    static void metrics(final String label) {
        final ByteBufAllocator a = childAllocator;
        ServerSupport.metrics(label, a instanceof ByteBufAllocatorMetricProvider m ? m.metric().usedDirectMemory() : -1,
            PlatformDependent.usedDirectMemory(), UPLOADS.get(), ERRORS.get());
    }

    /**
     * Connects to the server once and waits until the server has registered the accepted channel, whose
     * options (gRPC's {@code ChannelOption.ALLOCATOR} among them) are set by then.
     *
     * @return that channel's allocator
     */
    private static ByteBufAllocator probe(final int port) throws IOException, InterruptedException {
        ProbedServerChannel.recording = true;
        try (Socket s = new Socket("127.0.0.1", port)) {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PROBE_SECONDS);
            while (System.nanoTime() < deadline) {
                final Channel child = ProbedServerChannel.accepted;
                if (child != null && child.isRegistered()) {
                    return child.config().getAllocator();
                }
                TimeUnit.MILLISECONDS.sleep(5);
            }
            throw new IllegalStateException("the probe's connection was not registered within " + PROBE_SECONDS + " s");
        } finally {
            ProbedServerChannel.recording = false;
            ProbedServerChannel.accepted = null;
        }
    }

    /** The server's NIO channel, recording the channel it accepts while {@link #probe} waits for it. */
    public static final class ProbedServerChannel extends NioServerSocketChannel {
        static volatile boolean recording;
        static volatile Channel accepted;

        @Override
        protected int doReadMessages(final List<Object> buf) throws Exception {
            final int n = super.doReadMessages(buf);
            if (recording && n > 0 && buf.get(buf.size() - 1) instanceof Channel c) {
                accepted = c;
            }
            return n;
        }
    }

    private static byte[][] mixedAnswers() {
        final Map<Integer, byte[]> bySize = new HashMap<>();
        final byte[][] a = new byte[ServerSupport.MIXED.length][];
        for (int i = 0; i < a.length; i++) {
            a[i] = bySize.computeIfAbsent(ServerSupport.MIXED[i], n -> Arrays.copyOf(ServerSupport.PATTERN, n));
        }
        return a;
    }

    /**
     * The shaded Netty's version: its {@code Version.identify()} reads {@code META-INF/io.netty.versions.properties},
     * which grpc-netty-shaded ships relocated, under the name read here.
     */
    static String nettyVersion() throws IOException {
        final Properties p = new Properties();
        try (InputStream in = NioServerSocketChannel.class.getClassLoader()
            .getResourceAsStream("META-INF/io.grpc.netty.shaded.io.netty.versions.properties")) {
            if (in == null) {
                return "?";
            }
            p.load(in);
        }
        return p.getProperty("netty-common.version", "?");
    }
}
