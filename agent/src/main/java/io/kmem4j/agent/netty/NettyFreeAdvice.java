package io.kmem4j.agent.netty;

import java.nio.ByteBuffer;
import java.util.function.Predicate;

import net.bytebuddy.asm.Advice;

/**
 * The body of {@code freeDirect(ByteBuffer)} in the generated {@code Kmem4jDirectByteBuf}, which
 * Netty's {@code deallocate()} (reference count 0) and {@code capacity(int)} (the old buffer) call:
 * kmem4j's block goes back ({@link NettyBuffers#release}); any other buffer (Netty's own, after a
 * growth kmem4j did not serve) goes to Netty's {@code super.freeDirect}. Types of {@code java.base} only.
 */
final class NettyFreeAdvice {
    private NettyFreeAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static boolean enter(@Advice.Argument(0) final ByteBuffer buffer,
                         @Advice.FieldValue(NettyCopy.RELEASE_FIELD) final Predicate release) {
        return release != null && release.test(buffer);
    }
}
