package io.kmem4j.agent.bridge;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;

import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * Rewrites {@code sun.management.ManagementFactoryHelper.getBufferPoolMXBeans()} so that every
 * {@code return list} becomes {@code return (List) java.nio.Kmem4jBridge.bufferPools.apply(list)}:
 * three instructions before each {@code areturn}, no branch (the bridge's field is never null, the
 * identity until the agent sets it), one more stack slot; every other method and the class's shape
 * stay as they are. Written with the ASM that ships inside ByteBuddy, directly: ByteBuddy's advice
 * would cost tens of milliseconds of start-up for a class of this size, this costs about one.
 *
 * <p>The transformer stays registered, so a later retransformation of the class by anyone (another
 * agent) keeps the rewrite. A class file newer than the bundled ASM reads is left alone
 * ({@link AllocateDirectRewrite#unreadable}); {@link #failure()} says why.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms the class.
 */
final class BufferPoolListTransformer implements ClassFileTransformer {
    static final String HELPER = "sun/management/ManagementFactoryHelper";
    static final String METHOD = "getBufferPoolMXBeans";
    static final String DESCRIPTOR = "()Ljava/util/List;";
    private static final String OPERATOR = "java/util/function/UnaryOperator";

    private volatile String failure;
    private volatile boolean rewritten;

    /** @return why the last transformation of the class failed, or {@code null} */
    String failure() {
        return failure;
    }

    /** @return true once the method was found and rewritten */
    boolean rewritten() {
        return rewritten;
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (loader != null || !HELPER.equals(className)) {
            return null;
        }
        try {
            final String problem = AllocateDirectRewrite.unreadable(classfileBuffer, false);
            if (problem != null) {
                failure = problem;
                return null;
            }
            final byte[] bytes = Asm.rewrite(classfileBuffer);
            rewritten = true;
            return bytes;
        } catch (final Throwable t) {
            failure = t.toString(); // a transformer must not throw
            return null;
        }
    }

    /**
     * The rewrite itself, apart: the transformer's own class refers to no ASM type, so that loading it
     * in premain (where the helper class is usually not loaded yet) loads no ASM class either.
     */
    static final class Asm {
        private Asm() {
        }

        /**
         * @param classFile {@code ManagementFactoryHelper}'s class file
         * @return the rewritten class file
         * @throws IllegalStateException when the class has no {@code List getBufferPoolMXBeans()}
         */
        static byte[] rewrite(final byte[] classFile) {
            final byte[] rewritten = JdkClassTransformer.rewriteMethod(classFile, METHOD, DESCRIPTOR, 0, 0,
                (mv, access) -> new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitInsn(final int opcode) {
                        if (opcode == Opcodes.ARETURN) {
                            // stack: list -> list, operator -> operator, list -> result -> (List) result
                            super.visitFieldInsn(Opcodes.GETSTATIC, BootstrapBridge.CLASS_NAME.replace('.', '/'),
                                BootstrapBridge.BUFFER_POOLS, "L" + OPERATOR + ";");
                            super.visitInsn(Opcodes.SWAP);
                            super.visitMethodInsn(Opcodes.INVOKEINTERFACE, OPERATOR, "apply",
                                "(Ljava/lang/Object;)Ljava/lang/Object;", true);
                            super.visitTypeInsn(Opcodes.CHECKCAST, "java/util/List");
                        }
                        super.visitInsn(opcode);
                    }

                    @Override
                    public void visitMaxs(final int maxStack, final int maxLocals) {
                        super.visitMaxs(maxStack + 1, maxLocals);
                    }
                });
            if (rewritten == null) {
                throw new IllegalStateException(HELPER + " has no " + METHOD + DESCRIPTOR);
            }
            return rewritten;
        }
    }
}
