package io.kmem4j.agent.bridge;

import java.lang.annotation.Annotation;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.security.ProtectionDomain;

import io.kmem4j.core.UnsupportedJdkException;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.ClassFileVersion;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.matcher.ElementMatchers;

/**
 * Rewrites one method of one {@code java.base} class with advice, by retransformation: ByteBuddy
 * decorates the class (method bodies only, no new members, as retransformation requires), the
 * advice's hook parameter bound to a field of the bootstrap bridge. The transformer stays
 * registered, so a later retransformation of the class by anyone (another agent) keeps the advice;
 * for every other class it costs one string comparison per class load.
 * <ul>
 *   <li>{@link #allocateDirect}: {@code java.nio.ByteBuffer.allocateDirect(int)} with
 *       {@link AllocateDirectAdvice};</li>
 *   <li>{@link #cleanerClean}: the JDK cleaner's {@code clean()} with {@link CleanerAdvice} (the
 *       owned lifecycle of kmem4j's tracked buffers).</li>
 * </ul>
 *
 * <p>A JDK whose class files are newer than the bundled ByteBuddy reads (ByteBuddy 1.18.14 reads up
 * to version 71, JDK 27) is refused before ByteBuddy sees the class, with an
 * {@link UnsupportedJdkException} naming both versions: the agent then stays off with one warning.
 * {@code -Dkmem4j.simulateUnsupportedJdk=classFileVersion} makes the class file look one version
 * newer, to test that on any JDK.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms a class.
 */
public final class JdkClassTransformer implements ClassFileTransformer {
    /** The value of {@code -Dkmem4j.simulateUnsupportedJdk} that simulates too new a class file. */
    static final String SIMULATE_CLASS_FILE_VERSION = "classFileVersion";

    private final Class<?> type;
    private final String internalName;
    private final ElementMatcher<? super MethodDescription> method;
    private final Class<?> advice;
    private final Class<? extends Annotation> hook;
    private final Field bridgeField;
    private volatile Throwable failure;
    private volatile String unsupported;

    private JdkClassTransformer(final Class<?> type, final ElementMatcher<? super MethodDescription> method,
                                final Class<?> advice, final Class<? extends Annotation> hook, final Field bridgeField) {
        this.type = type;
        this.internalName = type.getName().replace('.', '/');
        this.method = method;
        this.advice = advice;
        this.hook = hook;
        this.bridgeField = bridgeField;
    }

    /**
     * Rewrites {@code ByteBuffer.allocateDirect(int)}.
     *
     * @param bridgeField the bridge's {@code allocator} field
     * @throws IllegalStateException when the rewrite failed; the transformer is removed again
     */
    public static void allocateDirect(final Instrumentation inst, final Field bridgeField) throws Exception {
        new JdkClassTransformer(ByteBuffer.class,
            ElementMatchers.named("allocateDirect").and(ElementMatchers.takesArguments(int.class)),
            AllocateDirectAdvice.class, AllocatorHook.class, bridgeField).install(inst);
    }

    /**
     * Rewrites the JDK cleaner's {@code clean()}: {@code jdk.internal.ref.Cleaner} (JDK 17-25) or
     * {@code java.nio.BufferCleaner$PhantomCleaner} (JDK 26+).
     *
     * @param bridgeField the bridge's {@code cleanerMark} field
     * @throws ClassNotFoundException when neither cleaner class exists
     * @throws IllegalStateException when the rewrite failed; the transformer is removed again
     */
    public static void cleanerClean(final Instrumentation inst, final Field bridgeField) throws Exception {
        Class<?> cleaner;
        Class<?> advice;
        try {
            cleaner = Class.forName("java.nio.BufferCleaner$PhantomCleaner", false, null);
            advice = CleanerAdvice.PhantomCleaner.class;
        } catch (final ClassNotFoundException before26) {
            cleaner = Class.forName("jdk.internal.ref.Cleaner", false, null);
            advice = CleanerAdvice.ListCleaner.class;
        }
        new JdkClassTransformer(cleaner, ElementMatchers.named("clean").and(ElementMatchers.takesArguments(0)),
            advice, CleanerMark.class, bridgeField).install(inst);
    }

    private void install(final Instrumentation inst) throws Exception {
        inst.addTransformer(this, true);
        try {
            inst.retransformClasses(type);
        } catch (final Throwable e) {
            inst.removeTransformer(this);
            throw e;
        }
        if (unsupported != null) {
            inst.removeTransformer(this);
            throw new UnsupportedJdkException(unsupported);
        }
        if (failure != null) {
            inst.removeTransformer(this);
            throw new IllegalStateException("rewriting " + type.getName() + " failed: " + failure, failure);
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
        if (loader != null || !internalName.equals(className)) {
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
                .decorate(TypeDescription.ForLoadedType.of(type), ClassFileLocator.Simple.of(type.getName(), classfileBuffer))
                .visit(Advice.withCustomMapping().bind(hook, bridgeField).to(advice).on(method))
                .make()
                .getBytes();
        } catch (final Throwable t) {
            failure = t; // a transformer must not throw; install() reports it
            return null;
        }
    }
}
