package io.kmem4j.agent.bridge;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.security.ProtectionDomain;

import io.kmem4j.core.UnsupportedJdkException;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.ClassFileVersion;
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
 * <p>A JDK whose class files are newer than the bundled ByteBuddy reads (ByteBuddy 1.18.14 reads up
 * to version 71, JDK 27) is refused before ByteBuddy sees the class, with an
 * {@link UnsupportedJdkException} naming both versions: the agent then stays off with one warning.
 * {@code -Dkmem4j.simulateUnsupportedJdk=classFileVersion} makes {@code ByteBuffer}'s class file look one
 * version newer, to test that on any JDK.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms a class.
 */
public final class ByteBufferTransformer implements ClassFileTransformer {
    private static final String INTERNAL_NAME = "java/nio/ByteBuffer";
    /** The value of {@code -Dkmem4j.simulateUnsupportedJdk} that simulates too new a class file. */
    static final String SIMULATE_CLASS_FILE_VERSION = "classFileVersion";

    private final Field bridge;
    private volatile Throwable failure;
    private volatile String unsupported;

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
        if (t.unsupported != null) {
            inst.removeTransformer(t);
            throw new UnsupportedJdkException(t.unsupported);
        }
        if (t.failure != null) {
            inst.removeTransformer(t);
            throw new IllegalStateException("rewriting java.nio.ByteBuffer failed: " + t.failure, t.failure);
        }
    }

    /**
     * @param classFile a class file
     * @param simulate  true to treat it as one version newer than ByteBuddy reads
     * @return why ByteBuddy cannot rewrite it (its major version is newer than ByteBuddy knows), or
     *         {@code null} when it can
     */
    static String unreadable(final byte[] classFile, final boolean simulate) {
        final int known = ClassFileVersion.latest().getMajorVersion();
        final int major = simulate ? known + 1 : ((classFile[6] & 0xff) << 8) | (classFile[7] & 0xff);
        if (major <= known) {
            return null;
        }
        return "the class files of " + UnsupportedJdkException.runningJdk() + " are version " + major
            + (simulate ? " (simulated: -Dkmem4j.simulateUnsupportedJdk=" + SIMULATE_CLASS_FILE_VERSION + ")" : "")
            + ", newer than the bytecode library in kmem4j reads (ByteBuddy: up to version " + known + ", JDK "
            + ClassFileVersion.latest().getJavaVersion() + ")";
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (loader != null || !INTERNAL_NAME.equals(className)) {
            return null;
        }
        try {
            final String problem = unreadable(classfileBuffer,
                SIMULATE_CLASS_FILE_VERSION.equals(System.getProperty("kmem4j.simulateUnsupportedJdk")));
            if (problem != null) {
                unsupported = problem;
                return null;
            }
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
