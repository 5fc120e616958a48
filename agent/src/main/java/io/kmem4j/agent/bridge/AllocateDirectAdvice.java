package io.kmem4j.agent.bridge;

import java.nio.ByteBuffer;
import java.util.function.IntFunction;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into {@code java.nio.ByteBuffer.allocateDirect(int)}. It may use only bootstrap
 * types: the allocator arrives through {@link AllocatorHook} as the value of the bridge's static
 * volatile field. When the allocator returns a buffer the JDK's body is skipped and that buffer is
 * returned; when it returns {@code null} (or is not installed) the JDK allocates as usual.
 */
public final class AllocateDirectAdvice {
    private AllocateDirectAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static ByteBuffer enter(@Advice.Argument(0) final int capacity, @AllocatorHook final IntFunction allocator) {
        return allocator == null ? null : (ByteBuffer) allocator.apply(capacity);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final ByteBuffer served,
                     @Advice.Return(readOnly = false) ByteBuffer returned) {
        if (served != null) {
            returned = served;
        }
    }
}
