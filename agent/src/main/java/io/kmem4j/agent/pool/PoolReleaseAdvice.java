package io.kmem4j.agent.pool;

import java.nio.ByteBuffer;
import java.util.function.Predicate;

import io.kmem4j.agent.bridge.BootstrapBridge;
import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into a pool's release method. The predicate bound to {@link PoolHooks.Release}
 * gives the buffer back to kmem4j when kmem4j owns it and answers whether the method's body must be
 * skipped (a non-void method then returns its type's default value):
 * <ul>
 *   <li>{@code Kmem4jBridge.release}: true for every buffer kmem4j owned, so the body only ever
 *       sees the pool's own buffers;</li>
 *   <li>{@code Kmem4jBridge.releaseThenOriginal} ({@code +original} members): false after an
 *       explicit buffer went back (its address is now 0), so the body still runs, e.g. to keep the
 *       pool's byte counter exact while its {@code Unsafe.freeMemory(0)} does nothing (Netty);
 *       true when the body must not see the buffer (kmem4j's with a cleaner, a second release).</li>
 * </ul>
 * A view of kmem4j's memory makes the predicate throw {@code IllegalArgumentException("duplicate or
 * slice")}, as {@code Unsafe.invokeCleaner}; nothing is freed. Bootstrap types only (see
 * {@link BootstrapBridge}).
 */
final class PoolReleaseAdvice {
    private PoolReleaseAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    @SuppressWarnings({"rawtypes", "unchecked"})
    static boolean enter(@PoolHooks.Buffer final ByteBuffer buffer, @PoolHooks.Release final Predicate release) {
        return release != null && release.test(buffer);
    }
}
