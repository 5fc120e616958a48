package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The burst of {@code benchmarks/run --netty}: many connections to the server's upload port, each
 * sending the start of an upload and half of its {@value #BODY}-byte body, so that Netty holds the
 * halves in its buffers (the server waits for the rest); then the other halves, each answer read, and
 * the sockets closed. What a connection sends and reads is its {@link Upload}: {@link #HTTP} (a
 * {@code POST /upload}, whose {@code HttpObjectAggregator} waits) or {@link GrpcUpload} (a gRPC message
 * over HTTP/2, whose deframer waits). Blocking sockets, one thread: opening 10,000 connections takes
 * about a second on loopback.
 */
final class BurstClient implements AutoCloseable {
    /** The body of one upload, bytes. */
    static final int BODY = 32 * 1024;
    private static final int TIMEOUT_MILLIS = 60_000;

    /** What one connection of the burst sends and reads. */
    interface Upload {
        /** Sends the start and the first half of the body over a new connection (reading what a handshake needs). */
        void begin(Socket s) throws IOException;

        /** @return the rest of the body, as sent */
        byte[] rest();

        /** @return whether the server answered the upload as done */
        boolean answered(InputStream in) throws IOException;
    }

    /**
     * HTTP/1.1: the head of a {@code POST /upload} and half its body; then the other half, and the answer
     * read to the server's close must start {@code HTTP/1.1 200}.
     */
    static final Upload HTTP = new Upload() {
        private final byte[] half = filled(new byte[BODY / 2]);
        private final byte[] head = ("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream"
            + "\r\nContent-Length: " + BODY + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        private final byte[] ok = "HTTP/1.1 200".getBytes(StandardCharsets.US_ASCII);

        @Override
        public void begin(final Socket s) throws IOException {
            final OutputStream out = s.getOutputStream();
            out.write(head);
            out.write(half);
            out.flush();
        }

        @Override
        public byte[] rest() {
            return half;
        }

        @Override
        public boolean answered(final InputStream in) throws IOException {
            final byte[] answer = in.readAllBytes();
            return answer.length >= ok.length && Arrays.equals(answer, 0, ok.length, ok, 0, ok.length);
        }
    };

    private final Upload upload;
    private final List<Socket> sockets = new ArrayList<>();
    private IOException firstFailure;

    BurstClient(final Upload upload) {
        this.upload = upload;
    }

    /** @return {@code b}, filled with {@code 'x'} */
    static byte[] filled(final byte[] b) {
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    /**
     * Opens up to {@code connections} connections, each with its start and half its body sent.
     *
     * @return the connections opened (fewer when the system refuses more: {@link #firstFailure()} says why)
     */
    int open(final InetSocketAddress server, final int connections) {
        for (int i = 0; i < connections; i++) {
            final Socket s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.setSoTimeout(TIMEOUT_MILLIS);
                s.connect(server, TIMEOUT_MILLIS);
                upload.begin(s);
                sockets.add(s);
            } catch (final IOException e) {
                closeQuietly(s);
                failed(e);
                break;
            }
        }
        return sockets.size();
    }

    /**
     * Sends the other half of every body, then reads every answer and closes.
     *
     * @return the uploads answered as done
     */
    int complete() {
        final boolean[] sent = new boolean[sockets.size()];
        for (int i = 0; i < sockets.size(); i++) {
            try {
                final OutputStream out = sockets.get(i).getOutputStream();
                out.write(upload.rest());
                out.flush();
                sent[i] = true;
            } catch (final IOException e) {
                failed(e);
            }
        }
        int ok = 0;
        for (int i = 0; i < sockets.size(); i++) {
            final Socket s = sockets.get(i);
            try (InputStream in = s.getInputStream()) {
                if (sent[i] && upload.answered(in)) {
                    ok++;
                }
            } catch (final IOException e) {
                failed(e);
            } finally {
                closeQuietly(s);
            }
        }
        sockets.clear();
        return ok;
    }

    /** @return the first I/O failure, or null */
    IOException firstFailure() {
        return firstFailure;
    }

    @Override
    public void close() {
        sockets.forEach(BurstClient::closeQuietly);
        sockets.clear();
    }

    private void failed(final IOException e) {
        if (firstFailure == null) {
            firstFailure = e;
        }
    }

    private static void closeQuietly(final Socket s) {
        try {
            s.close();
        } catch (final IOException ignored) {
            // closing
        }
    }
}
