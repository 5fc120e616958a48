package io.kmem4j.samples.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class PayloadTest {

    @Test
    void fillWritesTheSequenceByteByByte() {
        for (int length : new int[] {0, 1, 7, 8, 9, 100, 4099}) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length + 5);
            Payload.fill(buffer, 5, length, 77);
            for (int i = 0; i < length; i++) {
                assertThat(buffer.get(5 + i)).as("byte %d of %d", i, length)
                        .isEqualTo(Payload.byteAt(77, i));
            }
            assertThat(buffer.position()).isZero();
            assertThat(Payload.countMismatches(buffer, 5, length, 77)).isZero();
        }
    }

    @Test
    void chunksOfALongerSequenceJoinUp() {
        ByteBuffer whole = ByteBuffer.allocate(1000);
        Payload.fill(whole, 0, 1000, 5);
        ByteBuffer chunked = ByteBuffer.allocate(1000);
        for (int from = 0; from < 1000; from += 96) {
            ByteBuffer chunk = ByteBuffer.allocateDirect(96);
            int length = Math.min(96, 1000 - from);
            Payload.fill(chunk, 0, length, 5, from);
            chunked.put(from, chunk, 0, length);
        }
        assertThat(chunked.array()).isEqualTo(whole.array());
        assertThatThrownBy(() -> Payload.fill(whole, 0, 8, 5, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("from=3");
    }

    @Test
    void countsEveryWrongByte() {
        ByteBuffer buffer = ByteBuffer.allocate(20);
        Payload.fill(buffer, 0, 20, 9);
        buffer.put(0, (byte) ~buffer.get(0));
        buffer.put(3, (byte) ~buffer.get(3));
        buffer.put(19, (byte) ~buffer.get(19));
        assertThat(Payload.countMismatches(buffer, 0, 20, 9)).isEqualTo(3);
        assertThat(Payload.countMismatches(buffer, 0, 20, 10)).isGreaterThan(15);
    }

    @Test
    void seedsDiffer() {
        assertThat(Payload.seed(1, 2)).isNotEqualTo(Payload.seed(2, 1));
        assertThat(Payload.word(Payload.seed(1, 2), 0)).isNotEqualTo(Payload.word(Payload.seed(1, 3), 0));
        assertThat(Payload.differingBytes(0)).isZero();
        assertThat(Payload.differingBytes(0xFF00_0000_0000_00FFL)).isEqualTo(2);
    }
}
