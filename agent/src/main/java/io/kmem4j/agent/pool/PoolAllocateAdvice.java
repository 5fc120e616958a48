package io.kmem4j.agent.pool;

import java.nio.ByteBuffer;
import java.util.function.LongFunction;

import io.kmem4j.agent.bridge.BootstrapBridge;
import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into a pool's allocation method: a buffer from kmem4j's explicit flavour replaces
 * the method's body; {@code null} (size not served, kmem4j off, any failure) runs the body as
 * written. Bootstrap types only (see {@link BootstrapBridge}).
 */
final class PoolAllocateAdvice {
    private PoolAllocateAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings("rawtypes")
    static ByteBuffer enter(@PoolHooks.Size final long size, @PoolHooks.Explicit final LongFunction explicit) {
        return explicit == null ? null : (ByteBuffer) explicit.apply(size);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final ByteBuffer served, @Advice.Return(readOnly = false) ByteBuffer returned) {
        if (served != null) {
            returned = served;
        }
    }
}
