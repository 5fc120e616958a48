package io.kmem4j.samples.nettyhttp;

import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A Netty HTTP/1.1 server for {@link GeneratedContent}: {@code GET /content/<size>/<id>} returns
 * the generated body, anything else 404. Each body is written into a fresh direct buffer from the
 * channel's {@code ByteBufAllocator} (Netty's default allocator unless configured otherwise with
 * {@code -Dio.netty.allocator.type}), which Netty releases once it has been written.
 *
 * <p>Threads: one acceptor thread ({@code netty-http-boss}) and {@code workers} I/O threads
 * ({@code netty-http-server}), started by {@link #start} and stopped by {@link #close}.
 */
final class NettyContentServer implements AutoCloseable {

    private static final long SHUTDOWN_TIMEOUT_SECONDS = 10;

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel acceptor;

    private NettyContentServer(EventLoopGroup boss, EventLoopGroup workers, Channel acceptor) {
        this.boss = boss;
        this.workers = workers;
        this.acceptor = acceptor;
    }

    /** Binds to an ephemeral port of {@code host}. */
    static NettyContentServer start(InetAddress host, int workerThreads) throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1,
                new DefaultThreadFactory("netty-http-boss"), NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(workerThreads,
                new DefaultThreadFactory("netty-http-server"), NioIoHandler.newFactory());
        try {
            Channel acceptor = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new HttpServerCodec(), new ContentHandler());
                        }
                    })
                    .bind(new InetSocketAddress(host, 0))
                    .sync()
                    .channel();
            return new NettyContentServer(boss, workers, acceptor);
        } catch (InterruptedException | RuntimeException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    InetSocketAddress address() {
        return (InetSocketAddress) acceptor.localAddress();
    }

    /** Closes the listening socket and all connections and waits for the I/O threads to end. */
    @Override
    public void close() {
        acceptor.close().awaitUninterruptibly();
        boss.shutdownGracefully(0, SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        boss.terminationFuture().awaitUninterruptibly();
        workers.terminationFuture().awaitUninterruptibly();
    }

    /** Answers each request with its generated body; one instance per connection. */
    private static final class ContentHandler extends SimpleChannelInboundHandler<HttpObject> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject message) {
            if (!(message instanceof HttpRequest request)) {
                return; // request content (none for GET) is released by the superclass
            }
            GeneratedContent.Resource resource = request.method() == HttpMethod.GET
                    ? GeneratedContent.parse(new QueryStringDecoder(request.uri()).path())
                    : null;
            FullHttpResponse response;
            if (resource == null) {
                response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                        HttpResponseStatus.NOT_FOUND, Unpooled.EMPTY_BUFFER);
            } else {
                ByteBuf body = ctx.alloc().directBuffer(resource.size());
                try {
                    write(body, resource);
                } catch (RuntimeException e) {
                    body.release();
                    throw e;
                }
                response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                        HttpResponseStatus.OK, body);
                response.headers().set(HttpHeaderNames.CONTENT_TYPE,
                        HttpHeaderValues.APPLICATION_OCTET_STREAM);
            }
            HttpUtil.setContentLength(response, response.content().readableBytes());
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            HttpUtil.setKeepAlive(response, keepAlive);
            var written = ctx.writeAndFlush(response);
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            System.err.println("netty-http: server connection failed: " + cause);
            ctx.close();
        }

        private static void write(ByteBuf body, GeneratedContent.Resource resource) {
            long seed = resource.seed();
            int size = resource.size();
            int words = size >>> 3;
            for (int k = 0; k < words; k++) {
                body.writeLong(Payload.word(seed, k));
            }
            for (int i = words << 3; i < size; i++) {
                body.writeByte(Payload.byteAt(seed, i));
            }
        }
    }
}
