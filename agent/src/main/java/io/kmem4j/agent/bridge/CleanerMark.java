package io.kmem4j.agent.bridge;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Marks the advice parameter bound to {@code java.nio.Kmem4jBridge.cleanerMark} (see {@link BootstrapBridge}). */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@interface CleanerMark {
}
