package io.kmem4j.agent.bridge;

import java.io.InputStream;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The class-file version check that keeps a JDK newer than ByteBuddy to one warning. */
class JdkClassTransformerTest {

    private static byte[] byteBufferClassFile() throws Exception {
        try (InputStream in = ByteBuffer.class.getResourceAsStream("ByteBuffer.class")) {
            return in.readAllBytes();
        }
    }

    private static byte[] withMajorVersion(final byte[] classFile, final int major) {
        final byte[] b = classFile.clone();
        b[6] = (byte) (major >>> 8);
        b[7] = (byte) major;
        return b;
    }

    @Test
    void thisJdksByteBufferIsReadable() throws Exception {
        assertThat(AllocateDirectRewrite.unreadable(byteBufferClassFile(), false)).isNull();
    }

    @Test
    void theNewestVersionAsmKnowsIsReadableAndJdk27IsAmongThem() throws Exception {
        final int known = AllocateDirectRewrite.NEWEST_READABLE;
        assertThat(known).as("ASM must read JDK 27's class files (version 71)").isGreaterThanOrEqualTo(71);
        assertThat(AllocateDirectRewrite.unreadable(withMajorVersion(byteBufferClassFile(), known), false)).isNull();
    }

    @Test
    void aNewerClassFileIsNamedWithBothVersions() throws Exception {
        final int newer = AllocateDirectRewrite.NEWEST_READABLE + 1;
        assertThat(AllocateDirectRewrite.unreadable(withMajorVersion(byteBufferClassFile(), newer), false))
            .contains("are version " + newer).contains("up to version " + (newer - 1))
            .contains("JDK " + Runtime.version());
        assertThat(AllocateDirectRewrite.unreadable(byteBufferClassFile(), true))
            .contains("are version " + newer).contains("simulated");
    }

    /** Why the check exists: without it ASM itself refuses such a class file, with an exception. */
    @Test
    void asmRefusesAClassFileNewerThanItKnows() throws Exception {
        final byte[] newer = withMajorVersion(byteBufferClassFile(), AllocateDirectRewrite.NEWEST_READABLE + 1);
        assertThatThrownBy(() -> new net.bytebuddy.jar.asm.ClassReader(newer))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Unsupported class file major version");
    }
}
