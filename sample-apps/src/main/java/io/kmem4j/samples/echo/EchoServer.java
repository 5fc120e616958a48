package io.kmem4j.samples.echo;

import io.kmem4j.samples.support.DirectBuffers;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A non-blocking NIO echo server: accepts connections on an ephemeral port and sends every
 * {@linkplain EchoProtocol message} back to its sender.
 *
 * <p>Buffers: each connection reads headers into a small direct buffer that lives as long as the
 * connection and is then simply dropped for the garbage collector. Each message gets a direct
 * buffer of exactly its payload length, allocated when its header has been read; once echoed it is
 * freed explicitly with {@link DirectBuffers#free}, except every 8th, which is dropped so that the
 * garbage collector releases it.
 *
 * <p>Threads: all I/O runs on one thread, {@code echo-server}, started by {@link #start} and
 * stopped by {@link #close}, which may be called from any thread.
 */
final class EchoServer implements AutoCloseable {

    /** Every this many messages, the payload buffer is dropped instead of freed. */
    private static final int DROP_EVERY = 8;

    private final Selector selector;
    private final ServerSocketChannel acceptor;
    private final InetSocketAddress address;
    private final Thread thread;
    private volatile boolean running = true;
    private long messages; // selector thread only

    private EchoServer(Selector selector, ServerSocketChannel acceptor) throws IOException {
        this.selector = selector;
        this.acceptor = acceptor;
        this.address = (InetSocketAddress) acceptor.getLocalAddress();
        this.thread = new Thread(this::serve, "echo-server");
    }

    /** Binds a server to an ephemeral port of {@code host} and starts its selector thread. */
    static EchoServer start(InetAddress host) throws IOException {
        Selector selector = Selector.open();
        ServerSocketChannel acceptor = ServerSocketChannel.open();
        EchoServer server;
        try {
            acceptor.bind(new InetSocketAddress(host, 0));
            acceptor.configureBlocking(false);
            acceptor.register(selector, SelectionKey.OP_ACCEPT);
            server = new EchoServer(selector, acceptor);
        } catch (IOException | RuntimeException e) {
            acceptor.close();
            selector.close();
            throw e;
        }
        server.thread.start();
        return server;
    }

    /** The address the server listens on. */
    InetSocketAddress address() {
        return address;
    }

    /** Stops the selector thread and closes all connections; waits for the thread to end. */
    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serve() {
        try {
            while (running) {
                selector.select(this::handle);
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("echo: server failed: " + e);
        } finally {
            for (SelectionKey key : selector.keys()) {
                closeQuietly(key);
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing left to release
            }
        }
    }

    private void handle(SelectionKey key) {
        if (key.channel() == acceptor) {
            try {
                accept();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return;
        }
        try {
            ((Connection) key.attachment()).onReady(key);
        } catch (IOException e) { // includes the peer closing the connection
            closeQuietly(key);
        }
    }

    private void accept() throws IOException {
        SocketChannel channel = acceptor.accept();
        if (channel == null) {
            return;
        }
        try {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.register(selector, SelectionKey.OP_READ, new Connection(channel));
        } catch (IOException e) {
            channel.close();
        }
    }

    private static void closeQuietly(SelectionKey key) {
        key.cancel();
        try {
            key.channel().close();
        } catch (IOException ignored) {
            // already closed or reset by the peer
        }
    }

    /** Per-connection state: reads a header, then the payload, then writes both back. */
    private final class Connection {
        private final SocketChannel channel;
        private final ByteBuffer header = ByteBuffer.allocateDirect(EchoProtocol.HEADER_BYTES);
        private final ByteBuffer[] reply = new ByteBuffer[2];
        private ByteBuffer payload; // null until the current message's header is complete
        private boolean replying;

        Connection(SocketChannel channel) {
            this.channel = channel;
        }

        /** Makes as much progress as the socket allows without blocking. */
        void onReady(SelectionKey key) throws IOException {
            if (replying) {
                if (!flush()) {
                    return;
                }
                key.interestOps(SelectionKey.OP_READ);
            }
            while (readMessage()) {
                if (!flush()) {
                    key.interestOps(SelectionKey.OP_WRITE);
                    return;
                }
            }
        }

        /** Returns true once a whole message is buffered, false if more input is needed. */
        private boolean readMessage() throws IOException {
            if (payload == null) {
                if (!fill(header)) {
                    return false;
                }
                header.flip();
                payload = ByteBuffer.allocateDirect(EchoProtocol.payloadLength(header));
            }
            if (!fill(payload)) {
                return false;
            }
            payload.flip();
            reply[0] = header;
            reply[1] = payload;
            replying = true;
            return true;
        }

        private boolean fill(ByteBuffer buffer) throws IOException {
            if (buffer.hasRemaining() && channel.read(buffer) < 0) {
                throw new EOFException("connection closed by peer");
            }
            return !buffer.hasRemaining();
        }

        /** Writes the reply; once all is sent, prepares for the next message and returns true. */
        private boolean flush() throws IOException {
            channel.write(reply);
            if (header.hasRemaining() || payload.hasRemaining()) {
                return false;
            }
            release(payload);
            payload = null;
            reply[1] = null;
            header.clear();
            replying = false;
            return true;
        }
    }

    private void release(ByteBuffer buffer) {
        if (++messages % DROP_EVERY != 0) {
            DirectBuffers.free(buffer);
        } // else: just dropped; the garbage collector releases it
    }
}
