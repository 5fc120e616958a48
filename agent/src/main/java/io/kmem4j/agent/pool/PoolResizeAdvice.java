package io.kmem4j.agent.pool;

import java.nio.ByteBuffer;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

import io.kmem4j.agent.bridge.BootstrapBridge;
import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into a pool's resize method ({@code (ByteBuffer old, size) -> ByteBuffer}). The
 * bridge's {@code resize} function answers:
 * <ul>
 *   <li>a {@code ByteBuffer}: kmem4j served the new size (contents copied, the old buffer released);
 *       it replaces the method's body;</li>
 *   <li>another object (a token): the old buffer is kmem4j's and the new size is not served; the old
 *       buffer's block is detached (its address is 0, the block still kmem4j's), the body runs (for
 *       {@code Unsafe.reallocateMemory} that is a fresh allocation), and on exit the bridge's
 *       {@code resized} function gets the token and the body's result: a buffer gets the old contents
 *       and the old block is released; {@code null} or a throw (the pool's own limit, an
 *       {@code OutOfMemoryError}) gives the old buffer its block back, valid with its contents, as
 *       after a failed {@code realloc};</li>
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
                            @Advice.Local("pending") Object pending) {
        pending = null;
        if (resize == null) {
            return null;
        }
        final Object r = resize.apply(old, size);
        if (r instanceof ByteBuffer) {
            return (ByteBuffer) r;
        }
        pending = r;
        return null;
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static void exit(@Advice.Enter final ByteBuffer served, @Advice.Local("pending") final Object pending,
                     @PoolHooks.Resized final BiConsumer resized,
                     @Advice.Return(readOnly = false) ByteBuffer returned) {
        if (served != null) {
            returned = served;
        } else if (pending != null && resized != null) {
            resized.accept(pending, returned); // null after a throw: the old buffer is valid again
        }
    }
}
