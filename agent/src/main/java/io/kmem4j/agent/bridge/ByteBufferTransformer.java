package io.kmem4j.agent.bridge;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.security.ProtectionDomain;

import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.matcher.ElementMatchers;

/**
 * Rewrites {@code java.nio.ByteBuffer.allocateDirect(int)} with {@link AllocateDirectAdvice}, by
 * retransformation: ByteBuddy decorates the class (method bodies only, no new members, as
 * retransformation requires). The transformer stays registered so that a later retransformation of
 * {@code ByteBuffer} by anyone keeps the advice; for every other class it costs one string
 * comparison per class load.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms a class.
 */
public final class ByteBufferTransformer implements ClassFileTransformer {
    private static final String INTERNAL_NAME = "java/nio/ByteBuffer";

    private final Field bridge;
    private volatile Throwable failure;

    private ByteBufferTransformer(final Field bridge) {
        this.bridge = bridge;
    }

    /**
     * Registers the transformer and retransforms {@code ByteBuffer} (loaded long before premain).
     *
     * @throws IllegalStateException when the rewrite failed; the transformer is removed again
     */
    public static void install(final Instrumentation inst, final Field bridge) throws Exception {
        final ByteBufferTransformer t = new ByteBufferTransformer(bridge);
        inst.addTransformer(t, true);
        try {
            inst.retransformClasses(ByteBuffer.class);
        } catch (final Throwable e) {
            inst.removeTransformer(t);
            throw e;
        }
        if (t.failure != null) {
            inst.removeTransformer(t);
            throw new IllegalStateException("rewriting java.nio.ByteBuffer failed: " + t.failure, t.failure);
        }
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (loader != null || !INTERNAL_NAME.equals(className)) {
            return null;
        }
        try {
            return new ByteBuddy()
                .with(Implementation.Context.Disabled.Factory.INSTANCE)
                .decorate(TypeDescription.ForLoadedType.of(ByteBuffer.class),
                    ClassFileLocator.Simple.of(ByteBuffer.class.getName(), classfileBuffer))
                .visit(Advice.withCustomMapping().bind(AllocatorHook.class, bridge)
                    .to(AllocateDirectAdvice.class)
                    .on(ElementMatchers.named("allocateDirect").and(ElementMatchers.takesArguments(int.class))))
                .make()
                .getBytes();
        } catch (final Throwable t) {
            failure = t; // a transformer must not throw; install() reports it
            return null;
        }
    }
}
