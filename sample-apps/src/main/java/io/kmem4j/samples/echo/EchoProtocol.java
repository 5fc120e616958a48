package io.kmem4j.samples.echo;

import java.net.ProtocolException;
import java.nio.ByteBuffer;

/**
 * Wire format and test payload of the echo sample.
 *
 * <p>A message is a 4-byte big-endian payload length followed by the payload; the server echoes
 * both. Payload bytes are a deterministic function of (connection, message index, position), so the
 * client can verify every echoed byte without keeping a copy of what it sent.
 *
 * <p>Stateless; safe to use from any thread. All buffers are expected in the default big-endian
 * byte order.
 */
final class EchoProtocol {

    /** Length of the message header. */
    static final int HEADER_BYTES = Integer.BYTES;

    /** Largest payload the server accepts. */
    static final int MAX_PAYLOAD = 16 << 20;

    private EchoProtocol() {}

    /** Writes the header for a payload of {@code length} bytes at the buffer's position. */
    static void putHeader(ByteBuffer dst, int length) {
        dst.putInt(length);
    }

    /**
     * Returns the payload length stored in a complete header starting at the buffer's position,
     * without moving it.
     *
     * @throws ProtocolException if the length is negative or larger than {@link #MAX_PAYLOAD}
     */
    static int payloadLength(ByteBuffer header) throws ProtocolException {
        int length = header.getInt(header.position());
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new ProtocolException("invalid payload length " + length);
        }
        return length;
    }

    /** The byte at {@code position} of the payload of a connection's {@code message}-th message. */
    static byte payloadByte(int connection, int message, int position) {
        int h = connection * 0x9E3779B9 ^ message * 0x85EBCA6B ^ position * 0xC2B2AE35;
        return (byte) (h ^ h >>> 16);
    }

    /** Writes the {@code length}-byte payload of the given message at the buffer's position. */
    static void putPayload(ByteBuffer dst, int connection, int message, int length) {
        for (int i = 0; i < length; i++) {
            dst.put(payloadByte(connection, message, i));
        }
    }

    /**
     * Compares an echoed message (header and payload, from the buffer's position to its limit) with
     * the message that was sent, consuming the buffer.
     *
     * @return the number of bytes that differ, plus the number of bytes missing or in excess
     */
    static long countMismatches(ByteBuffer echo, int connection, int message, int length) {
        long mismatches = Math.abs(echo.remaining() - (long) (HEADER_BYTES + length));
        ByteBuffer expectedHeader = ByteBuffer.allocate(HEADER_BYTES).putInt(0, length);
        for (int i = 0; i < HEADER_BYTES && echo.hasRemaining(); i++) {
            if (echo.get() != expectedHeader.get(i)) {
                mismatches++;
            }
        }
        for (int i = 0; i < length && echo.hasRemaining(); i++) {
            if (echo.get() != payloadByte(connection, message, i)) {
                mismatches++;
            }
        }
        return mismatches;
    }
}
