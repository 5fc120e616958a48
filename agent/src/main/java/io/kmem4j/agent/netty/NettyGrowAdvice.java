package io.kmem4j.agent.netty;

import java.nio.ByteBuffer;
import java.util.function.IntFunction;

import net.bytebuddy.asm.Advice;

/**
 * The body of {@code allocateDirect(int)} in the generated {@code Kmem4jDirectByteBuf} (Netty 4.1's
 * growth hook, {@code capacity(int)}): a block from kmem4j ({@link NettyBuffers#grow}), else Netty's
 * own {@code super.allocateDirect}. Types of {@code java.base} only.
 */
final class NettyGrowAdvice {
    private NettyGrowAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings("rawtypes")
    static ByteBuffer enter(@Advice.Argument(0) final int capacity,
                            @Advice.FieldValue(NettyCopy.GROW_FIELD) final IntFunction grow) {
        return grow == null ? null : (ByteBuffer) grow.apply(capacity);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final ByteBuffer served, @Advice.Return(readOnly = false) ByteBuffer returned) {
        if (served != null) {
            returned = served;
        }
    }
}
