package io.kmem4j.agent;

import java.nio.ByteBuffer;
import java.util.function.BiFunction;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into a pool's resize method ({@code (ByteBuffer old, size) -> ByteBuffer}). The
 * bridge's {@code resize} function answers:
 * <ul>
 *   <li>a direct buffer: kmem4j served the new size (contents copied, the old buffer released);
 *       it replaces the method's body;</li>
 *   <li>a heap buffer: the old buffer was kmem4j's and the new size is not served; the heap buffer
 *       holds the old contents, kmem4j's block is released (the old buffer's address is now 0), the
 *       body runs (for {@code Unsafe.reallocateMemory} that is a fresh allocation) and the contents
 *       are copied into its result;</li>
 *   <li>{@code null}: not kmem4j's buffer; the body runs as written.</li>
 * </ul>
 * Bootstrap types only (see {@link BootstrapBridge}).
 */
final class PoolResizeAdvice {
    private PoolResizeAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static ByteBuffer enter(@PoolHooks.Buffer final ByteBuffer old, @PoolHooks.Size final long size,
                            @PoolHooks.Resize final BiFunction resize,
                            @Advice.Local("saved") ByteBuffer saved) {
        saved = null;
        if (resize == null) {
            return null;
        }
        final ByteBuffer r = (ByteBuffer) resize.apply(old, size);
        if (r != null && r.isDirect()) {
            return r;
        }
        saved = r;
        return null;
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Enter final ByteBuffer served, @Advice.Local("saved") final ByteBuffer saved,
                     @Advice.Return(readOnly = false) ByteBuffer returned) {
        if (served != null) {
            returned = served;
        } else if (saved != null && returned != null) {
            returned.put(0, saved, 0, Math.min(saved.capacity(), returned.capacity()));
        }
    }
}
