package io.kmem4j.samples.jetty;

import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty 12 server (core {@link Handler} API, no servlets) for {@link GeneratedContent}: {@code GET
 * /content/<size>/<id>} returns the generated body, anything else 404.
 *
 * <p>Buffers: a response body is generated in chunks of up to {@value #CHUNK_BYTES} bytes into one
 * direct buffer acquired from the server's {@link ByteBufferPool} per request, each chunk written
 * (blocking) before the next is generated; the buffer goes back to the pool after the last write.
 *
 * <p>Threads: Jetty's own thread pool ({@code jetty-server-N}), started by {@link #start} and
 * stopped by {@link #close}.
 */
final class JettyContentServer implements AutoCloseable {

    /** Largest chunk written at once; a multiple of 8 (see {@link Payload#fill}). */
    static final int CHUNK_BYTES = 32 * 1024;

    private final Server server;
    private final ServerConnector connector;

    private JettyContentServer(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /** Binds to an ephemeral port of {@code host}. */
    static JettyContentServer start(String host, int maxThreads) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(maxThreads, Math.min(4, maxThreads));
        threads.setName("jetty-server");
        Server server = new Server(threads);
        ServerConnector connector = new ServerConnector(server, 1, 1);
        connector.setHost(host);
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new ContentHandler());
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new JettyContentServer(server, connector);
    }

    InetSocketAddress address() {
        return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
    }

    /** The server's buffer pool, for diagnostics. */
    ByteBufferPool byteBufferPool() {
        return server.getByteBufferPool();
    }

    /** Stops the server: closes connections and ends its threads. */
    @Override
    public void close() throws Exception {
        server.stop();
    }

    /** Writes generated bodies; handlers may block in Jetty's default invocation type. */
    private static final class ContentHandler extends Handler.Abstract {

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            GeneratedContent.Resource resource = "GET".equals(request.getMethod())
                    ? GeneratedContent.parse(Request.getPathInContext(request))
                    : null;
            if (resource == null) {
                Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
                return true;
            }
            response.setStatus(HttpStatus.OK_200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, resource.size());
            RetainableByteBuffer chunk = request.getComponents().getByteBufferPool()
                    .acquire(Math.min(resource.size(), CHUNK_BYTES), true);
            try {
                writeBody(response, resource, chunk.getByteBuffer());
                callback.succeeded();
            } catch (Throwable failure) {
                callback.failed(failure);
            } finally {
                chunk.release();
            }
            return true;
        }

        private static void writeBody(Response response, GeneratedContent.Resource resource,
                ByteBuffer buffer) throws Exception {
            int size = resource.size();
            long seed = resource.seed();
            int written = 0;
            do {
                int length = Math.min(size - written, CHUNK_BYTES);
                buffer.clear();
                Payload.fill(buffer, 0, length, seed, written);
                buffer.limit(length);
                written += length;
                try (Blocker.Callback blocker = Blocker.callback()) {
                    response.write(written == size, buffer, blocker);
                    blocker.block();
                }
            } while (written < size);
        }
    }
}
