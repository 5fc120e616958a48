package io.kmem4j.agent.bridge;

import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * Writes the bridge's class file ({@code java.nio.Kmem4jBridge}, {@link BootstrapBridge}) with the ASM
 * that ships inside ByteBuddy. Run at build time ({@link #main}, the agent module's
 * {@code process-classes} phase), so that the agent reads the finished class file at start-up instead
 * of loading ASM to write it; run at start-up only when that file is missing (tests from an IDE).
 */
public final class BridgeClassFile {
    private BridgeClassFile() {
    }

    /**
     * Writes the class file to {@code args[0]}.
     *
     * @param args the file to write
     * @throws java.io.IOException when it cannot be written
     */
    public static void main(final String[] args) throws java.io.IOException {
        final java.nio.file.Path out = java.nio.file.Path.of(args[0]);
        java.nio.file.Files.createDirectories(out.getParent());
        java.nio.file.Files.write(out, classBytes());
    }

    /** @return the bridge's class file (a few fields and three small methods). */
    static byte[] classBytes() {
        final ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER,
            BootstrapBridge.CLASS_NAME.replace('.', '/'), null, "java/lang/Object", null);
        cw.visitSource("Kmem4jBridge.java", null); // stack traces name it, not "Unknown Source"
        final int psv = Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC | Opcodes.ACC_VOLATILE;
        cw.visitField(psv, BootstrapBridge.FIELD_NAME, Type.getDescriptor(IntFunction.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.EXPLICIT, Type.getDescriptor(LongFunction.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.RELEASE, Type.getDescriptor(Predicate.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.RELEASE_THEN_ORIGINAL, Type.getDescriptor(Predicate.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.RESIZE, Type.getDescriptor(BiFunction.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.RESIZED, Type.getDescriptor(BiConsumer.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.CLEANER_MARK, Type.getDescriptor(Object.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.BUFFER_POOLS, Type.getDescriptor(UnaryOperator.class), null, null).visitEnd();
        cw.visitField(psv, BootstrapBridge.NETTY_BUFFER, Type.getDescriptor(BiFunction.class), null, null).visitEnd();
        final MethodVisitor clinit = cw.visitMethod(Opcodes.ACC_STATIC, "<clinit>", "()V", null, null);
        clinit.visitCode();
        clinit.visitMethodInsn(Opcodes.INVOKESTATIC, Type.getInternalName(UnaryOperator.class), "identity",
            "()" + Type.getDescriptor(UnaryOperator.class), true);
        clinit.visitFieldInsn(Opcodes.PUTSTATIC, BootstrapBridge.CLASS_NAME.replace('.', '/'), BootstrapBridge.BUFFER_POOLS,
            Type.getDescriptor(UnaryOperator.class));
        clinit.visitInsn(Opcodes.RETURN);
        clinit.visitMaxs(0, 0);
        clinit.visitEnd();
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, BootstrapBridge.JDK_ALLOCATE,
            "(I)Ljava/nio/ByteBuffer;", null, null);
        mv.visitCode();
        jdkBody(mv);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        allocateDirect(cw);
        cw.visitEnd();
        return cw.toByteArray();
    }

    /**
     * {@code public static ByteBuffer allocateDirect(int capacity)}: what {@code ByteBuffer.allocateDirect}
     * calls once rewritten ({@link AllocateDirectRewrite}):
     * <pre>
     *   IntFunction f = allocator;
     *   if (f != null) { Object b = f.apply(capacity); if (b != null) return (ByteBuffer) b; }
     *   return new DirectByteBuffer(capacity);   // the JDK's body
     * </pre>
     */
    private static void allocateDirect(final ClassWriter cw) {
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, BootstrapBridge.ALLOCATE_DIRECT,
            "(I)Ljava/nio/ByteBuffer;", null, null);
        mv.visitCode();
        askAllocatorFirst(mv);
        jdkBody(mv); // inline, not a call of allocateDirectJdk: one frame fewer in every stack trace under it
        mv.visitMaxs(0, 0);
        mv.visitEnd();
    }

    /**
     * The start of a static {@code (int capacity)} method returning a {@code ByteBuffer}: returns what
     * the bridge's {@code allocator} answers, unless the function or its answer is null; then it goes on
     * after these instructions with the stack as it was. Both the bridge's {@code allocateDirect} and
     * the prologue {@link JdkClassTransformer#allocateDirect} puts in front of a body of another shape.
     */
    static void askAllocatorFirst(final MethodVisitor mv) {
        final Label none = new Label();
        mv.visitFieldInsn(Opcodes.GETSTATIC, BootstrapBridge.CLASS_NAME.replace('.', '/'), BootstrapBridge.FIELD_NAME,
            Type.getDescriptor(IntFunction.class));
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitVarInsn(Opcodes.ILOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, "java/util/function/IntFunction", "apply", "(I)Ljava/lang/Object;",
            true);
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitTypeInsn(Opcodes.CHECKCAST, "java/nio/ByteBuffer");
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitLabel(none); // the function or its answer, null
        mv.visitFrame(Opcodes.F_NEW, 1, new Object[] {Opcodes.INTEGER}, 1, new Object[] {"java/lang/Object"});
        mv.visitInsn(Opcodes.POP);
    }

    /** The JDK's {@code allocateDirect} body: {@code return new DirectByteBuffer(capacity);}. */
    private static void jdkBody(final MethodVisitor mv) {
        mv.visitTypeInsn(Opcodes.NEW, "java/nio/DirectByteBuffer");
        mv.visitInsn(Opcodes.DUP);
        mv.visitVarInsn(Opcodes.ILOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/nio/DirectByteBuffer", "<init>", "(I)V", false);
        mv.visitInsn(Opcodes.ARETURN);
    }
}
