package io.kmem4j.agent.netty;

import java.util.function.IntFunction;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * The body of {@code allocateDirectBuffer(int)} in the generated {@code Kmem4jDirectByteBuf} (Netty
 * 4.2's growth hook): a {@code CleanableDirectBuffer} over a block from kmem4j
 * ({@link NettyBuffers#growCleanable}), else Netty's own {@code super.allocateDirectBuffer}. Types of
 * {@code java.base} only.
 */
final class NettyGrowCleanableAdvice {
    private NettyGrowCleanableAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings("rawtypes")
    static Object enter(@Advice.Argument(0) final int capacity,
                        @Advice.FieldValue(NettyCopy.GROW_CLEANABLE_FIELD) final IntFunction grow) {
        return grow == null ? null : grow.apply(capacity);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final Object served,
                     @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned) {
        if (served != null) {
            returned = served;
        }
    }
}
