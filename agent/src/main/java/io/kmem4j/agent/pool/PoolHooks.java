package io.kmem4j.agent.pool;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Advice parameter bindings of the pool advice classes ({@link PoolAllocateAdvice},
 * {@link PoolResizeAdvice}, {@link PoolReleaseAdvice}); bound
 * per rewritten method by {@link PoolTransformer}.
 */
final class PoolHooks {
    private PoolHooks() {
    }

    /** The size argument (parameter 0 of an allocation, 1 of a resize). */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Size {
    }

    /** The buffer a release or resize works on: parameter 0, or a handle's buffer field. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Buffer {
    }

    /** {@code java.nio.Kmem4jBridge.explicit}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Explicit {
    }

    /** {@code java.nio.Kmem4jBridge.release} or {@code releaseThenOriginal} ({@code +original} members). */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Release {
    }

    /** {@code java.nio.Kmem4jBridge.resize}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Resize {
    }

    /** {@code java.nio.Kmem4jBridge.resized}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Resized {
    }
}
