package io.kmem4j.it.apps;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.Version;
import io.netty.util.internal.PlatformDependent;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * A Netty echo server and its clients, written against the API Netty 4.1 and 4.2 share (it runs on
 * either: the test forks it with one version's jars). Prints, on stdout:
 * <pre>
 * netty: version=4.1.137.Final noCleaner=true allocator=UnpooledByteBufAllocator
 * netty: echo ok connections=4 messages=800 bytes=... crc=...
 * netty: expand ok capacity=262144
 * netty: foreign &lt;case&gt; &lt;outcome&gt;      (a buffer Netty's release path is given, see {@link #foreign})
 * netty: used-direct-memory start=.. end=..  (Netty's own counter, PlatformDependent.usedDirectMemory())
 * netty: ok
 * </pre>
 * then, with {@code --hold}, {@code netty: holding} and waits for the end of stdin. Any failure
 * prints {@code netty: FAIL ...} and exits 1.
 */
public final class NettyEchoApp {

    static final int CONNECTIONS = 4;
    static final int MESSAGES = 200;
    /** Message sizes, in turn: around and above the largest size class (64 KiB) too. */
    static final int[] SIZES = {64, 1000, 4096, 16_384, 60_000, 100_000};

    private NettyEchoApp() {
    }

    public static void main(String[] args) throws Exception {
        try {
            System.out.println("netty: version=" + Version.identify().get("netty-common").artifactVersion()
                    + " noCleaner=" + PlatformDependent.useDirectBufferNoCleaner()
                    + " allocator=" + ByteBufAllocator.DEFAULT.getClass().getSimpleName());
            long used = PlatformDependent.usedDirectMemory();
            echo();
            expand();
            foreign();
            if (List.of(args).contains("--preset-checks")) {
                presetChecks();
            }
            System.out.println("netty: used-direct-memory start=" + used + " end=" + PlatformDependent.usedDirectMemory());
            System.out.println("netty: ok");
        } catch (Throwable t) {
            System.out.println("netty: FAIL " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        }
        if (List.of(args).contains("--hold")) {
            System.out.println("netty: holding");
            while (System.in.read() >= 0) {
                // until EOF
            }
        }
    }

    /** Four connections each send {@value #MESSAGES} messages; the server echoes; each client checks the bytes. */
    @SuppressWarnings("deprecation") // NioEventLoopGroup: the one event loop group both 4.1 and 4.2 have
    static void echo() throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(2);
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.write(msg);
                                }

                                @Override
                                public void channelReadComplete(ChannelHandlerContext ctx) {
                                    ctx.flush();
                                }
                            });
                        }
                    }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            int port = ((InetSocketAddress) server.localAddress()).getPort();
            List<Client> clients = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS; c++) {
                Client client = new Client(c);
                clients.add(client);
                new Bootstrap().group(group).channel(NioSocketChannel.class).handler(client)
                        .connect("127.0.0.1", port).sync();
            }
            long bytes = 0;
            CRC32 all = new CRC32();
            for (Client client : clients) {
                client.done.get(60, TimeUnit.SECONDS);
                if (client.received != client.expected || client.receivedCrc.getValue() != client.sentCrc.getValue()) {
                    throw new IllegalStateException("connection " + client.id + ": received " + client.received
                            + " of " + client.expected + " bytes, crc " + client.receivedCrc.getValue() + " vs "
                            + client.sentCrc.getValue());
                }
                bytes += client.received;
                all.update(ByteBuffer.allocate(8).putLong(0, client.receivedCrc.getValue()));
            }
            server.close().sync();
            System.out.println("netty: echo ok connections=" + CONNECTIONS + " messages=" + CONNECTIONS * MESSAGES
                    + " bytes=" + bytes + " crc=" + all.getValue());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** One client connection: sends its messages when active, checks what comes back, then closes. */
    static final class Client extends ChannelInboundHandlerAdapter {
        final int id;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final CRC32 sentCrc = new CRC32();
        final CRC32 receivedCrc = new CRC32();
        long expected;
        long received;

        Client(int id) {
            this.id = id;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            for (int i = 0; i < MESSAGES; i++) {
                int size = SIZES[(i + id) % SIZES.length];
                ByteBuf m = ctx.alloc().directBuffer(size);
                for (int j = 0; j < size; j++) {
                    m.writeByte((byte) (j * 31 + i + id));
                }
                sentCrc.update(m.nioBuffer());
                expected += size;
                ctx.write(m);
            }
            ctx.flush();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                received += b.readableBytes();
                receivedCrc.update(b.nioBuffer());
            } finally {
                b.release();
            }
            if (received >= expected) {
                ctx.close();
                done.complete(null);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }

    /** A direct ByteBuf written past its capacity grows (Netty reallocates it) from 64 B to 256 KiB. */
    static void expand() {
        ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(64);
        try {
            byte[] piece = new byte[1000];
            int total = 256 * 1024;
            for (int written = 0; written < total; written += piece.length) {
                int n = Math.min(piece.length, total - written);
                for (int j = 0; j < n; j++) {
                    piece[j] = (byte) ((written + j) * 7);
                }
                b.writeBytes(piece, 0, n);
            }
            for (int i = 0; i < total; i++) {
                if (b.getByte(i) != (byte) (i * 7)) {
                    throw new IllegalStateException("expanded buffer differs at " + i);
                }
            }
            System.out.println("netty: expand ok capacity=" + b.capacity());
        } finally {
            b.release();
        }
    }

    /**
     * Buffers Netty's release path {@code PlatformDependent.freeDirectBuffer} may be handed that are
     * not Netty's own: a heap buffer, a JDK direct buffer of 1 MiB, a slice of a direct buffer, and
     * a direct buffer of 4 KiB released twice. Prints the outcome of each (the same with and without
     * the agent).
     */
    static void foreign() {
        outcome("heap", () -> PlatformDependent.freeDirectBuffer(ByteBuffer.allocate(64)));
        outcome("jdk-direct-1MiB", () -> PlatformDependent.freeDirectBuffer(ByteBuffer.allocateDirect(1 << 20)));
        ByteBuffer root = ByteBuffer.allocateDirect(4096);
        outcome("slice", () -> PlatformDependent.freeDirectBuffer(root.slice(16, 64)));
        outcome("direct-4KiB", () -> PlatformDependent.freeDirectBuffer(root));
        outcome("direct-4KiB-again", () -> PlatformDependent.freeDirectBuffer(root));
    }

    private static void outcome(String name, Runnable release) {
        String result;
        try {
            release.run();
            result = "ok";
        } catch (Exception e) { // Netty 4.1 rethrows the reflective call's InvocationTargetException as it is
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            result = cause.getClass().getSimpleName() + ": " + cause.getMessage();
        }
        System.out.println("netty: foreign " + name + " " + result);
    }

    /**
     * With {@code --preset-checks} (only under the agent's {@code netty} preset: without it a slice
     * given to Netty's no-cleaner free would free an interior pointer): a no-cleaner buffer of 4 KiB,
     * a slice of it handed to the no-cleaner release ({@code freeDirectNoCleaner} on 4.1,
     * {@code DirectCleaner.freeDirectBuffer} on 4.2), then the buffer itself released.
     */
    static void presetChecks() throws Exception {
        Method free41 = find(PlatformDependent.class, "freeDirectNoCleaner", ByteBuffer.class);
        if (free41 != null) {
            ByteBuffer root = (ByteBuffer) PlatformDependent.class.getMethod("allocateDirectNoCleaner", int.class)
                    .invoke(null, 4096);
            outcome("preset slice", () -> invoke(free41, null, root.slice(16, 64)));
            outcome("preset root", () -> invoke(free41, null, root));
            return;
        }
        Object cleanable = PlatformDependent.class.getMethod("allocateDirect", int.class).invoke(null, 4096);
        Class<?> cleanableType = Class.forName("io.netty.util.internal.CleanableDirectBuffer");
        ByteBuffer root = (ByteBuffer) cleanableType.getMethod("buffer").invoke(cleanable);
        Class<?> directCleaner = Class.forName("io.netty.util.internal.DirectCleaner");
        java.lang.reflect.Constructor<?> make = directCleaner.getDeclaredConstructor();
        make.setAccessible(true);
        Method free42 = directCleaner.getDeclaredMethod("freeDirectBuffer", ByteBuffer.class);
        free42.setAccessible(true);
        Object cleaner = make.newInstance();
        outcome("preset slice", () -> invoke(free42, cleaner, root.slice(16, 64)));
        Method clean = cleanableType.getMethod("clean");
        outcome("preset root", () -> invoke(clean, cleanable));
    }

    private static Method find(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static void invoke(Method m, Object target, Object... args) {
        try {
            m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause()
                    : new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
