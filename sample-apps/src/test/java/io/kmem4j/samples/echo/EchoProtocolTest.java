package io.kmem4j.samples.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class EchoProtocolTest {

    @Test
    void headerIsFourBytesBigEndian() throws ProtocolException {
        ByteBuffer header = ByteBuffer.allocate(EchoProtocol.HEADER_BYTES);
        EchoProtocol.putHeader(header, 0x010203);
        assertThat(header.array()).containsExactly(0, 1, 2, 3);

        header.flip();
        assertThat(EchoProtocol.payloadLength(header)).isEqualTo(0x010203);
        assertThat(header.position()).isZero();
    }

    @Test
    void rejectsInvalidLengths() {
        assertThatThrownBy(() -> EchoProtocol.payloadLength(ByteBuffer.allocate(4).putInt(0, -1)))
                .isInstanceOf(ProtocolException.class);
        ByteBuffer tooLong = ByteBuffer.allocate(4).putInt(0, EchoProtocol.MAX_PAYLOAD + 1);
        assertThatThrownBy(() -> EchoProtocol.payloadLength(tooLong))
                .isInstanceOf(ProtocolException.class);
    }

    @Test
    void payloadIsDeterministicAndDiffersPerConnectionAndMessage() {
        byte[] a = payload(0, 0, 256);
        assertThat(payload(0, 0, 256)).isEqualTo(a);
        assertThat(payload(0, 1, 256)).isNotEqualTo(a);
        assertThat(payload(1, 0, 256)).isNotEqualTo(a);
        // not a short repeating pattern: a shifted copy does not match
        assertThat(Arrays.copyOfRange(a, 1, 256))
                .isNotEqualTo(Arrays.copyOfRange(a, 0, 255));
    }

    @Test
    void countsMismatchedMissingAndExtraBytes() {
        ByteBuffer echo = message(3, 5, 1000);
        assertThat(EchoProtocol.countMismatches(echo.duplicate(), 3, 5, 1000)).isZero();
        assertThat(EchoProtocol.countMismatches(echo.duplicate(), 3, 6, 1000)).isPositive();

        ByteBuffer corrupted = message(3, 5, 1000);
        corrupted.put(10, (byte) ~corrupted.get(10));
        corrupted.put(0, (byte) 1); // header now claims a different length
        assertThat(EchoProtocol.countMismatches(corrupted, 3, 5, 1000)).isEqualTo(2);

        ByteBuffer truncated = echo.duplicate().limit(echo.limit() - 3);
        assertThat(EchoProtocol.countMismatches(truncated, 3, 5, 1000)).isEqualTo(3);
        assertThat(EchoProtocol.countMismatches(message(3, 5, 1000), 3, 5, 999)).isEqualTo(2);
    }

    @Test
    void emptyPayloadIsJustAHeader() {
        ByteBuffer echo = message(0, 0, 0);
        assertThat(echo.remaining()).isEqualTo(EchoProtocol.HEADER_BYTES);
        assertThat(EchoProtocol.countMismatches(echo, 0, 0, 0)).isZero();
    }

    private static ByteBuffer message(int connection, int message, int length) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(EchoProtocol.HEADER_BYTES + length);
        EchoProtocol.putHeader(buffer, length);
        EchoProtocol.putPayload(buffer, connection, message, length);
        return buffer.flip();
    }

    private static byte[] payload(int connection, int message, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = EchoProtocol.payloadByte(connection, message, i);
        }
        return bytes;
    }
}
