package io.kmem4j.agent.netty;

import java.nio.ByteBuffer;
import java.util.function.Predicate;

import net.bytebuddy.asm.Advice;

/**
 * The body of {@code clean()} in the generated {@code Kmem4jCleanableBuffer} (Netty 4.2's handle of
 * a buffer served on growth): kmem4j's block goes back ({@link NettyBuffers#release}). Types of
 * {@code java.base} only.
 */
final class NettyCleanAdvice {
    private NettyCleanAdvice() {
    }

    @Advice.OnMethodEnter
    @SuppressWarnings({"rawtypes", "unchecked"})
    static void enter(@Advice.FieldValue(NettyCopy.BUFFER_FIELD) final ByteBuffer buffer,
                      @Advice.FieldValue(NettyCopy.RELEASE_FIELD) final Predicate release) {
        if (release != null) {
            release.test(buffer);
        }
    }
}
