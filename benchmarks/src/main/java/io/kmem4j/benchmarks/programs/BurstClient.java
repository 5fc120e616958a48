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
 * sending the head of a {@code POST /upload} and half of its {@value #BODY}-byte body, so that Netty
 * holds the halves in its buffers (its {@code HttpObjectAggregator} waits for the rest); then the
 * other halves, each answer read to the server's close, and the sockets closed. Blocking sockets, one
 * thread: opening 10,000 connections takes about a second on loopback.
 */
final class BurstClient implements AutoCloseable {
    /** The body of one upload, bytes. */
    static final int BODY = 32 * 1024;
    private static final int TIMEOUT_MILLIS = 60_000;
    private static final byte[] HALF = new byte[BODY / 2];
    private static final byte[] HEAD = ("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream"
        + "\r\nContent-Length: " + BODY + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OK = "HTTP/1.1 200".getBytes(StandardCharsets.US_ASCII);

    private final List<Socket> sockets = new ArrayList<>();
    private IOException firstFailure;

    static {
        Arrays.fill(HALF, (byte) 'x');
    }

    /**
     * Opens up to {@code connections} connections, each with its head and half its body sent.
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
                final OutputStream out = s.getOutputStream();
                out.write(HEAD);
                out.write(HALF);
                out.flush();
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
     * Sends the other half of every body, then reads every answer to the server's close and closes.
     *
     * @return the uploads answered {@code 200}
     */
    int complete() {
        final boolean[] sent = new boolean[sockets.size()];
        for (int i = 0; i < sockets.size(); i++) {
            try {
                final OutputStream out = sockets.get(i).getOutputStream();
                out.write(HALF);
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
                if (sent[i] && startsWith(in.readAllBytes(), OK)) {
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

    private static boolean startsWith(final byte[] answer, final byte[] prefix) {
        return answer.length >= prefix.length && Arrays.equals(answer, 0, prefix.length, prefix, 0, prefix.length);
    }

    private static void closeQuietly(final Socket s) {
        try {
            s.close();
        } catch (final IOException ignored) {
            // closing
        }
    }
}
