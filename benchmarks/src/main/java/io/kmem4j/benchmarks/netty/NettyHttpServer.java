package io.kmem4j.benchmarks.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.Version;
import io.netty.util.internal.PlatformDependent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The HTTP/1.1 server of {@code benchmarks/run --netty}, written against the API Netty 4.1 and 4.2
 * share (the harness forks it with {@code benchmarks/target/classes} and one version's jars). NIO
 * transport, Netty's default allocator (chosen by {@code -Dio.netty.allocator.type} or by the agent's
 * preset) and Netty's default leak detection.
 *
 * <ul>
 *   <li>Port 1, {@code HttpServerCodec} + {@link BodyHandler}, keep-alive: {@code GET /s} answers 256 B;
 *       {@code GET /m} answers the next size of {@link ServerSupport#MIXED}, a fixed sequence of 100 sizes (256 B 40 %,
 *       2 KiB 25 %, 8 KiB 15 %, 24 KiB 10 %, 60 KiB 8 %, 200 KiB 2 %) each connection walks from its own
 *       offset. Every body is a direct buffer from the channel's allocator the handler fills itself (a copy
 *       of a fixed pattern); Netty releases it once written.</li>
 *   <li>Port 2 (the burst), {@code HttpServerCodec} + {@code HttpObjectAggregator(1 MiB)} + {@link UploadHandler}:
 *       {@code POST /upload} is held until its whole body has arrived, then answered {@code 200} and the
 *       connection closed. A client that sends half a body makes Netty hold that half in its buffers.</li>
 * </ul>
 *
 * <p>Arguments: {@code --threads N} (event-loop threads, default 1). Output on stdout:
 * <pre>
 * server: netty=4.2.18.Final allocator=AdaptiveByteBufAllocator noCleaner=false threads=1 gc=G1 Young Generation,...
 * server: metrics label=start allocatorUsedDirect=... nettyUsedDirect=... jdkDirectCount=... jdkDirectBytes=...
 *         gcCount=... gcMillis=... uploads=... errors=... [kmem4j.Buffers=... kmem4j.BytesInUse=... ...]
 * server: listening port=P upload-port=Q
 * </pre>
 * then a metrics line for every {@code metrics LABEL} line read from stdin, and at the end of stdin
 * {@code metrics label=end}, after which the server closes and exits 0.
 */
public final class NettyHttpServer {
    private static final int SMALL = ServerSupport.SMALL;
    private static final int[] MIXED = ServerSupport.MIXED;
    private static final byte[] PATTERN = ServerSupport.PATTERN;
    private static final int UPLOAD_LIMIT = 1 << 20;
    private static final AtomicInteger CONNECTIONS = new AtomicInteger();
    private static final AtomicLong UPLOADS = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);

    private NettyHttpServer() {
    }

    /** @param args {@code --threads N} */
    @SuppressWarnings("deprecation") // NioEventLoopGroup: the one event-loop group 4.1 and 4.2 both have
    public static void main(final String[] args) throws Exception {
        final int threads = ServerSupport.threads(args);
        System.out.println("server: netty=" + Version.identify().get("netty-common").artifactVersion()
            + " allocator=" + ByteBufAllocator.DEFAULT.getClass().getSimpleName()
            + " noCleaner=" + PlatformDependent.useDirectBufferNoCleaner() + " threads=" + threads
            + " cpus=" + Runtime.getRuntime().availableProcessors() + " gc=" + ServerSupport.gcNames());
        // the platform MBean server now, in every arm (the agent's arm has it from its start): its classes
        // are then in every arm's RSS before the load
        metrics("start");
        final EventLoopGroup boss = new NioEventLoopGroup(1);
        final EventLoopGroup workers = new NioEventLoopGroup(threads);
        try {
            final Channel http = bind(boss, workers, new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(final SocketChannel ch) {
                    ch.pipeline().addLast(new HttpServerCodec(), new BodyHandler(CONNECTIONS.getAndIncrement()));
                }
            });
            final Channel upload = bind(boss, workers, new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(final SocketChannel ch) {
                    ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(UPLOAD_LIMIT), new UploadHandler());
                }
            });
            System.out.println("server: listening port=" + ((InetSocketAddress) http.localAddress()).getPort()
                + " upload-port=" + ((InetSocketAddress) upload.localAddress()).getPort());
            ServerSupport.serveCommands(NettyHttpServer::metrics);
            http.close().sync();
            upload.close().sync();
        } finally {
            boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
            workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
        metrics("end");
    }

    private static Channel bind(final EventLoopGroup boss, final EventLoopGroup workers,
                                final ChannelHandler initializer) throws InterruptedException {
        return new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true).childHandler(initializer)
            .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    /** One line of figures ({@link ServerSupport#metrics}), with the default allocator's and Netty's direct memory. */
    static void metrics(final String label) {
        final ByteBufAllocator a = ByteBufAllocator.DEFAULT;
        ServerSupport.metrics(label, a instanceof ByteBufAllocatorMetricProvider m ? m.metric().usedDirectMemory() : -1,
            PlatformDependent.usedDirectMemory(), UPLOADS.get(), ERRORS.get());
    }

    private static void answer(final ChannelHandlerContext ctx, final FullHttpResponse response, final boolean keepAlive) {
        HttpUtil.setContentLength(response, response.content().readableBytes());
        HttpUtil.setKeepAlive(response, keepAlive);
        final var written = ctx.writeAndFlush(response);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static void failed(final ChannelHandlerContext ctx, final Throwable cause) {
        if (ERRORS.getAndIncrement() == 0) {
            // wrk resets its connections when it stops: one per connection is expected
            System.out.println("server: first connection error (counted in errors=): " + cause);
        }
        ctx.close();
    }

    /** {@code /s} and {@code /m}: a body of the next size, filled by the handler; one instance per connection. */
    private static final class BodyHandler extends SimpleChannelInboundHandler<HttpObject> {
        private int next;

        BodyHandler(final int connection) {
            this.next = (connection * 37) % MIXED.length; // connections walk the sequence out of step
        }

        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final HttpObject msg) {
            if (!(msg instanceof HttpRequest request)) {
                return; // a GET's empty content, released by the superclass
            }
            final String uri = request.uri();
            final int size = uri.equals("/s") ? SMALL : uri.equals("/m") ? MIXED[next++ % MIXED.length] : -1;
            final FullHttpResponse response;
            if (size < 0) {
                response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND,
                    Unpooled.EMPTY_BUFFER);
            } else {
                final ByteBuf body = ctx.alloc().directBuffer(size);
                body.writeBytes(PATTERN, 0, size);
                response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM);
            }
            answer(ctx, response, HttpUtil.isKeepAlive(request));
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
            failed(ctx, cause);
        }
    }

    /** {@code POST /upload}: the aggregated body is counted and released, {@code 200 ok} and close. */
    private static final class UploadHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request) {
            UPLOADS.incrementAndGet();
            final ByteBuf body = ctx.alloc().directBuffer(OK.length).writeBytes(OK);
            answer(ctx, new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body), false);
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
            failed(ctx, cause);
        }
    }
}
