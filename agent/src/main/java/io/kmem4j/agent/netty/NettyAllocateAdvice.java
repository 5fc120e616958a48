package io.kmem4j.agent.netty;

import java.util.function.BiFunction;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Advice inlined into {@code newDirectBuffer(int initialCapacity, int maxCapacity)} of Netty's
 * {@code PooledByteBufAllocator} and {@code AdaptiveByteBufAllocator}: a {@code ByteBuf} over one of
 * kmem4j's explicit blocks ({@link NettyBuffers#apply}) replaces the method's body; {@code null}
 * (a size kmem4j does not serve, kmem4j off, any failure) runs Netty's body as written. Bootstrap
 * types only: the hook is read from {@code java.nio.Kmem4jBridge.nettyBuffer}. The two capacities
 * travel as one {@code long} ({@code max << 32 | initial}), whose box C2 removes once the hook's call
 * is inlined.
 */
final class NettyAllocateAdvice {
    private NettyAllocateAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static Object enter(@Advice.This final Object allocator, @Advice.Argument(0) final int initialCapacity,
                        @Advice.Argument(1) final int maxCapacity, @NettyHook final BiFunction hook) {
        return hook == null ? null
            : hook.apply(allocator, Long.valueOf((long) maxCapacity << 32 | (initialCapacity & 0xFFFF_FFFFL)));
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final Object served,
                     @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned) {
        if (served != null) {
            returned = served;
        }
    }
}
