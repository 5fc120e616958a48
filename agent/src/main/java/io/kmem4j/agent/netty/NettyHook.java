package io.kmem4j.agent.netty;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Advice parameter binding: {@code java.nio.Kmem4jBridge.nettyBuffer} ({@link NettyAllocateAdvice}). */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@interface NettyHook {
}
