package io.kmem4j.benchmarks.programs;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The little of HTTP/2 (RFC 9113) and HPACK (RFC 7541) the gRPC burst ({@link GrpcUpload}) speaks over a
 * blocking socket: the client preface, frames as bytes, header fields as literals without indexing (no
 * Huffman coding, no dynamic table), and reading a frame.
 */
final class Http2 {
    /** The client connection preface, sent before the client's first SETTINGS frame. */
    static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    static final int DATA = 0x0;
    static final int HEADERS = 0x1;
    static final int RST_STREAM = 0x3;
    static final int SETTINGS = 0x4;
    static final int GOAWAY = 0x7;
    static final int END_STREAM = 0x1;
    static final int ACK = 0x1;
    static final int END_HEADERS = 0x4;
    /** SETTINGS_MAX_FRAME_SIZE's initial value: the largest frame payload a peer must accept. */
    static final int MAX_FRAME = 16_384;
    /** The frames read are checked against this (a server's SETTINGS, headers, an answer's DATA). */
    private static final int MAX_READ = 1 << 20;
    private static final int HEADER_LENGTH = 9;

    /** A frame read. */
    record Frame(int type, int flags, int stream, byte[] payload) {
        boolean has(final int flag) {
            return (flags & flag) != 0;
        }
    }

    private Http2() {
    }

    /** @return a frame: the 9-byte header (length, type, flags, stream) and the payload */
    static byte[] frame(final int type, final int flags, final int stream, final byte[] payload, final int offset,
                        final int length) {
        if (length > MAX_FRAME || length < 0) {
            throw new IllegalArgumentException("frame payload of " + length + " bytes; at most " + MAX_FRAME);
        }
        final byte[] f = new byte[HEADER_LENGTH + length];
        f[0] = (byte) (length >>> 16);
        f[1] = (byte) (length >>> 8);
        f[2] = (byte) length;
        f[3] = (byte) type;
        f[4] = (byte) flags;
        f[5] = (byte) (stream >>> 24 & 0x7F);
        f[6] = (byte) (stream >>> 16);
        f[7] = (byte) (stream >>> 8);
        f[8] = (byte) stream;
        System.arraycopy(payload, offset, f, HEADER_LENGTH, length);
        return f;
    }

    /** @return an empty SETTINGS frame (the peer's initial values stand), or its acknowledgement with {@code ACK} */
    static byte[] settings(final int flags) {
        return frame(SETTINGS, flags, 0, new byte[0], 0, 0);
    }

    /**
     * @return DATA frames carrying {@code data[offset, offset + length)} on {@code stream}, each at most
     *     {@value #MAX_FRAME} bytes; the last with {@code END_STREAM} when {@code end}
     */
    static byte[] data(final int stream, final byte[] data, final int offset, final int length, final boolean end) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(length + (length / MAX_FRAME + 1) * HEADER_LENGTH);
        int at = offset;
        do {
            final int n = Math.min(MAX_FRAME, offset + length - at);
            final boolean last = at + n == offset + length;
            out.writeBytes(frame(DATA, last && end ? END_STREAM : 0, stream, data, at, n));
            at += n;
        } while (at < offset + length);
        return out.toByteArray();
    }

    /** @return one HEADERS frame with {@code END_HEADERS} whose block is the fields, {@code name, value, name, value, ...} */
    static byte[] headers(final int stream, final int flags, final String... fields) {
        final ByteArrayOutputStream block = new ByteArrayOutputStream();
        for (int i = 0; i < fields.length; i += 2) {
            block.writeBytes(literal(fields[i], fields[i + 1]));
        }
        final byte[] b = block.toByteArray();
        return frame(HEADERS, flags | END_HEADERS, stream, b, 0, b.length);
    }

    /** @return an HPACK "literal header field without indexing, new name" (RFC 7541 6.2.2), both strings raw */
    static byte[] literal(final String name, final String value) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x00);
        string(out, name);
        string(out, value);
        return out.toByteArray();
    }

    private static void string(final ByteArrayOutputStream out, final String s) {
        final byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        integer(out, 0x00, 7, b.length); // H = 0: not Huffman-coded
        out.writeBytes(b);
    }

    /** Writes an HPACK integer (RFC 7541 5.1) with an {@code prefix}-bit prefix after the bits {@code high}. */
    static void integer(final ByteArrayOutputStream out, final int high, final int prefix, final int value) {
        final int max = (1 << prefix) - 1;
        if (value < max) {
            out.write(high | value);
            return;
        }
        out.write(high | max);
        int rest = value - max;
        while (rest >= 128) {
            out.write(rest % 128 + 128);
            rest /= 128;
        }
        out.write(rest);
    }

    /** @return the next frame; EOFException when the stream ends first */
    static Frame read(final InputStream in) throws IOException {
        final byte[] h = in.readNBytes(HEADER_LENGTH);
        if (h.length < HEADER_LENGTH) {
            throw new EOFException("the connection ended" + (h.length == 0 ? "" : " inside a frame header"));
        }
        final int length = (h[0] & 0xFF) << 16 | (h[1] & 0xFF) << 8 | h[2] & 0xFF;
        if (length > MAX_READ) {
            throw new IOException("a frame of " + length + " bytes");
        }
        final byte[] payload = in.readNBytes(length);
        if (payload.length < length) {
            throw new EOFException("the connection ended inside a frame of " + length + " bytes");
        }
        return new Frame(h[3] & 0xFF, h[4] & 0xFF, (h[5] & 0x7F) << 24 | (h[6] & 0xFF) << 16 | (h[7] & 0xFF) << 8 | h[8] & 0xFF,
            payload);
    }

    /**
     * The value of a header field in a header block, where its name and value stand as raw literals (as
     * Netty's HPACK encoder writes short strings on a new connection: it Huffman-codes only long ones).
     *
     * @return the value, or null when the name does not stand raw in the block (absent, indexed or Huffman-coded)
     */
    static String literalValue(final byte[] block, final String name) {
        final byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        for (int i = 1; i + n.length < block.length; i++) {
            if (block[i - 1] == n.length && Arrays.equals(block, i, i + n.length, n, 0, n.length)) {
                final int at = i + n.length;
                final int length = block[at] & 0xFF;
                if (length < 0x7F && at + 1 + length <= block.length) { // not Huffman-coded, one-byte length
                    return new String(block, at + 1, length, StandardCharsets.US_ASCII);
                }
            }
        }
        return null;
    }
}
