package io.kmem4j.samples.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class DirectBuffersTest {

    @Test
    void freesDirectBuffers() {
        assertThat(DirectBuffers.free(ByteBuffer.allocateDirect(4096))).isTrue();
    }

    @Test
    void leavesOtherBuffersToTheGarbageCollector() {
        assertThat(DirectBuffers.free(ByteBuffer.allocate(4096))).isFalse();
        assertThat(DirectBuffers.free(ByteBuffer.allocateDirect(4096).slice(0, 16))).isFalse();
    }
}
