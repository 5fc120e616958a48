package io.kmem4j.benchmarks.programs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.kmem4j.benchmarks.netty.GrpcMethods;

/**
 * One connection of the gRPC burst ({@link BurstClient.Upload}): a unary call of the server's upload method
 * over raw HTTP/2 ({@link Http2}), its {@value BurstClient#BODY}-byte message sent in two halves.
 * <ol>
 *   <li>{@link #begin}: the client preface and an empty SETTINGS frame; the server's SETTINGS frame read
 *       (frames before it skipped) and acknowledged; HEADERS (END_HEADERS) for stream 1, literal fields
 *       without indexing ({@code :method POST}, {@code :scheme http}, {@code :path}, {@code :authority},
 *       {@code content-type application/grpc}, {@code te trailers}); DATA with the gRPC message's 5-byte
 *       prefix (not compressed, length {@value BurstClient#BODY}) and its first half. gRPC's deframer keeps
 *       the received DATA buffers until the message is whole.</li>
 *   <li>{@link #rest}: the second half, the last DATA frame with END_STREAM.</li>
 *   <li>{@link #answered}: frames read until the HEADERS frame with END_STREAM on stream 1 (the trailers):
 *       the answer's DATA must be the message {@code ok} and the trailers' {@code grpc-status}, where it
 *       stands raw (Netty's HPACK encoder writes short strings raw), {@code 0}. A stream that ends otherwise
 *       (RST_STREAM, GOAWAY, DATA with END_STREAM: an HTTP error such as 415) is not answered.</li>
 * </ol>
 * Everything sent stays inside HTTP/2's initial windows (65,535 bytes for the stream and the connection),
 * so the client never waits for a WINDOW_UPDATE, and no frame exceeds the initial maximum frame size.
 */
final class GrpcUpload implements BurstClient.Upload {
    static final int STREAM = 1;
    /** The gRPC message: a 5-byte prefix (flag 0: not compressed, then the length), then the body. */
    private static final byte[] MESSAGE = message(BurstClient.filled(new byte[BurstClient.BODY]));
    /** Where the second half starts: after the prefix and the first half of the body. */
    private static final int HALF = 5 + BurstClient.BODY / 2;
    private static final byte[] REST = Http2.data(STREAM, MESSAGE, HALF, MESSAGE.length - HALF, true);
    private static final byte[] ANSWER = message(GrpcMethods.UPLOAD_ANSWER.getBytes(StandardCharsets.US_ASCII));
    /** How many frames may come before the server's SETTINGS. */
    private static final int FRAMES_BEFORE_SETTINGS = 16;

    private String authority;
    private byte[] afterSettings;

    /** @return the gRPC length-prefixed message of {@code body} */
    static byte[] message(final byte[] body) {
        final byte[] m = new byte[5 + body.length];
        m[1] = (byte) (body.length >>> 24);
        m[2] = (byte) (body.length >>> 16);
        m[3] = (byte) (body.length >>> 8);
        m[4] = (byte) body.length;
        System.arraycopy(body, 0, m, 5, body.length);
        return m;
    }

    /**
     * @return what follows the server's SETTINGS: its acknowledgement, the request's HEADERS and the DATA
     *     of the prefix and the first half of the body
     */
    static byte[] afterSettings(final String authority) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(HALF + 256);
        out.writeBytes(Http2.settings(Http2.ACK));
        out.writeBytes(Http2.headers(STREAM, 0, ":method", "POST", ":scheme", "http", ":path", GrpcMethods.UPLOAD_PATH,
            ":authority", authority, "content-type", "application/grpc", "te", "trailers"));
        out.writeBytes(Http2.data(STREAM, MESSAGE, 0, HALF, false));
        return out.toByteArray();
    }

    @Override
    public void begin(final Socket s) throws IOException {
        final OutputStream out = s.getOutputStream();
        final ByteArrayOutputStream hello = new ByteArrayOutputStream();
        hello.writeBytes(Http2.PREFACE);
        hello.writeBytes(Http2.settings(0));
        out.write(hello.toByteArray());
        out.flush();
        final InputStream in = s.getInputStream();
        for (int i = 0;; i++) {
            final Http2.Frame f = Http2.read(in);
            if (f.type() == Http2.SETTINGS && !f.has(Http2.ACK)) {
                break;
            }
            if (i == FRAMES_BEFORE_SETTINGS) {
                throw new IOException("no SETTINGS frame among the server's first " + FRAMES_BEFORE_SETTINGS + " frames");
            }
        }
        final String a = s.getInetAddress().getHostAddress() + ":" + s.getPort();
        if (!a.equals(authority)) {
            authority = a;
            afterSettings = afterSettings(a);
        }
        out.write(afterSettings);
        out.flush();
    }

    @Override
    public byte[] rest() {
        return REST;
    }

    @Override
    public boolean answered(final InputStream in) throws IOException {
        final ByteArrayOutputStream data = new ByteArrayOutputStream();
        while (true) {
            final Http2.Frame f = Http2.read(in);
            if (f.type() == Http2.RST_STREAM || f.type() == Http2.GOAWAY) {
                return false;
            }
            if (f.stream() != STREAM) {
                continue;
            }
            if (f.type() == Http2.DATA) {
                data.writeBytes(f.payload());
                if (f.has(Http2.END_STREAM)) {
                    return false; // no trailers: not a gRPC answer (an HTTP error, such as 415 for a wrong content-type)
                }
            } else if (f.type() == Http2.HEADERS && f.has(Http2.END_STREAM)) {
                final String status = Http2.literalValue(f.payload(), "grpc-status");
                return Arrays.equals(data.toByteArray(), ANSWER) && (status == null || status.equals("0"));
            }
        }
    }
}
