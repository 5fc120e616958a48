package io.kmem4j.samples.nettyhttp;

import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * A Netty HTTP/1.1 load client for {@link NettyContentServer}: {@code connections} keep-alive
 * connections, each sending its share of the requests one after the other for random {@link
 * GeneratedContent} resources and verifying every byte of every response body.
 *
 * <p>Resources come from a {@link SplittableRandom} seeded with the given seed and split once per
 * connection, so a run is reproducible. Responses are aggregated by Netty's {@link
 * HttpObjectAggregator} into buffers of the channel's allocator and released after verification.
 *
 * <p>Threads: {@code threads} I/O threads ({@code netty-http-client}); {@link #run} blocks the
 * calling thread, reporting progress every two seconds.
 */
final class NettyLoadClient {

    /** Totals of a run or of one connection. */
    record Result(long requests, long bytes, long mismatches) {
        static final Result EMPTY = new Result(0, 0, 0);

        Result plus(Result o) {
            return new Result(requests + o.requests, bytes + o.bytes, mismatches + o.mismatches);
        }
    }

    private static final long PROGRESS_INTERVAL_MILLIS = 2_000;
    private static final long SHUTDOWN_TIMEOUT_SECONDS = 10;

    private final InetSocketAddress server;
    private final int connections;
    private final int requests;
    private final int threads;
    private final long seed;
    private final LongAdder completed = new LongAdder();

    NettyLoadClient(InetSocketAddress server, int connections, int requests, int threads, long seed) {
        this.server = server;
        this.connections = connections;
        this.requests = requests;
        this.threads = threads;
        this.seed = seed;
    }

    /**
     * Runs all connections to completion.
     *
     * @param progress called every two seconds with the number of responses verified so far
     * @throws IOException if a connection fails
     */
    Result run(LongConsumer progress) throws IOException, InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads,
                new DefaultThreadFactory("netty-http-client"), NioIoHandler.newFactory());
        try {
            SplittableRandom seeds = new SplittableRandom(seed);
            List<CompletableFuture<Result>> results = new ArrayList<>(connections);
            for (int c = 0; c < connections; c++) {
                int count = requests / connections + (c < requests % connections ? 1 : 0);
                results.add(connect(group, new Connection(count, seeds.split())));
            }
            CompletableFuture<Void> all =
                    CompletableFuture.allOf(results.toArray(CompletableFuture[]::new));
            while (!await(all)) {
                progress.accept(completed.sum());
            }
            Result total = Result.EMPTY;
            for (CompletableFuture<Result> result : results) {
                total = total.plus(result.join());
            }
            return total;
        } finally {
            group.shutdownGracefully(0, SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .awaitUninterruptibly();
        }
    }

    private CompletableFuture<Result> connect(EventLoopGroup group, Connection connection) {
        new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline().addLast(new HttpClientCodec(),
                                new HttpObjectAggregator(GeneratedContent.MAX_SIZE), connection);
                    }
                })
                .connect(server)
                .addListener(f -> {
                    if (!f.isSuccess()) {
                        connection.done.completeExceptionally(f.cause());
                    }
                });
        return connection.done;
    }

    /** Returns true once {@code all} is done; throws its failure. */
    private static boolean await(CompletableFuture<Void> all) throws IOException, InterruptedException {
        try {
            all.get(PROGRESS_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("a connection failed: " + cause, cause);
        }
    }

    /** One connection: sends a request, verifies its response, sends the next. */
    private final class Connection extends SimpleChannelInboundHandler<FullHttpResponse> {
        final CompletableFuture<Result> done = new CompletableFuture<>();
        private final int count;
        private final SplittableRandom random;
        private GeneratedContent.Resource pending;
        private int sent;
        private long bytes;
        private long mismatches;

        Connection(int count, SplittableRandom random) {
            this.count = count;
            this.random = random;
        }

        @Override
        public boolean isSharable() {
            return false;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            sendNextOrFinish(ctx);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
            if (pending == null) {
                throw new IllegalStateException("unexpected response " + response.status());
            }
            mismatches += mismatches(response, pending);
            bytes += pending.size();
            pending = null;
            completed.increment();
            sendNextOrFinish(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.completeExceptionally(new IOException("connection closed after " + sent
                    + " of " + count + " requests"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }

        private void sendNextOrFinish(ChannelHandlerContext ctx) {
            if (sent == count) {
                done.complete(new Result(count, bytes, mismatches));
                ctx.close();
                return;
            }
            pending = GeneratedContent.pick(random);
            sent++;
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1,
                    HttpMethod.GET, pending.path(), Unpooled.EMPTY_BUFFER);
            request.headers().set(HttpHeaderNames.HOST, server.getHostString());
            ctx.writeAndFlush(request).addListener(f -> {
                if (!f.isSuccess()) {
                    done.completeExceptionally(f.cause());
                    ctx.close();
                }
            });
        }

        /** Wrong bytes of the body (plus missing or excess bytes); a non-200 status counts fully. */
        private long mismatches(FullHttpResponse response, GeneratedContent.Resource resource) {
            if (!response.status().equals(HttpResponseStatus.OK)) {
                return Math.max(1, resource.size());
            }
            ByteBuf body = response.content();
            int size = resource.size();
            int length = body.readableBytes();
            long wrong = Math.abs(length - (long) size);
            int common = Math.min(length, size);
            long seed = resource.seed();
            int base = body.readerIndex();
            int words = common >>> 3;
            for (int k = 0; k < words; k++) {
                long diff = body.getLong(base + (k << 3)) ^ Payload.word(seed, k);
                if (diff != 0) {
                    wrong += Payload.differingBytes(diff);
                }
            }
            for (int i = words << 3; i < common; i++) {
                if (body.getByte(base + i) != Payload.byteAt(seed, i)) {
                    wrong++;
                }
            }
            return wrong;
        }
    }
}
