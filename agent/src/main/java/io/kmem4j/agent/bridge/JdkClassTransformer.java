package io.kmem4j.agent.bridge;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.nio.ByteBuffer;
import java.security.ProtectionDomain;

import io.kmem4j.core.UnsupportedJdkException;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * Rewrites one method of one {@code java.base} class by retransformation: a few instructions are put
 * in front of its body (method body only, no new members, as retransformation requires), reading a
 * field of the bootstrap bridge ({@code java.nio.Kmem4jBridge}, {@link BootstrapBridge}). Written with
 * the ASM that ships inside ByteBuddy: ByteBuddy's own type machinery would load some 700 classes at
 * every JVM start, for two prologues of a handful of instructions each. The transformer stays
 * registered, so a later retransformation of the class by anyone (another agent) keeps the prologue;
 * for every other class it costs one string comparison per class load.
 * <ul>
 *   <li>{@link #allocateDirect}: {@code java.nio.ByteBuffer.allocateDirect(int)} asks the bridge's
 *       {@code allocator} first (only where {@link AllocateDirectRewrite}, which needs no ASM, finds a
 *       body other than the JDK's, or a bridge without {@code allocateDirect}):
 *       <pre>
 *   IntFunction f = Kmem4jBridge.allocator;
 *   if (f != null) { Object b = f.apply(capacity); if (b != null) return (ByteBuffer) b; }
 *   ... the JDK's body</pre></li>
 *   <li>{@link #cleanerClean}: the JDK cleaner's {@code clean()} runs a cleaner carrying kmem4j's
 *       mark (a cleaner outside the JDK's list: the owned lifecycle, {@code io.kmem4j.core.OwnedLifecycle})
 *       without the list:
 *       <pre>
 *   17-25, jdk.internal.ref.Cleaner:        if (mark != null &amp;&amp; prev == mark) { release(thunk); return; }
 *   26+, java.nio.BufferCleaner$PhantomCleaner: if (mark != null &amp;&amp; node == mark) { clear(); release(action); return; }
 *   ... the JDK's body
 *   release(t) = t instanceof Consumer ? ((Consumer) t).accept(this) : t.run()</pre>
 *       with {@code mark = Kmem4jBridge.cleanerMark}; every other cleaner runs the JDK's body (two
 *       field loads and a compare more). The thunk, kmem4j's release hook of the buffer's slab slot,
 *       is given the cleaner so that it can tell the buffer over the slot now from a stale one; it
 *       releases at most once by itself and never throws.</li>
 * </ul>
 *
 * <p>A JDK whose class files are newer than the bundled ASM reads (version 71, JDK 27) is refused
 * before ASM sees the class ({@link AllocateDirectRewrite#unreadable}), with an
 * {@link UnsupportedJdkException} naming both versions: the agent then stays off with one warning.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms a class.
 */
public final class JdkClassTransformer implements ClassFileTransformer {
    private static final String BRIDGE = BootstrapBridge.CLASS_NAME.replace('.', '/');

    private final Class<?> type;
    private final String internalName;
    private final String method;
    private final String descriptor;
    /** Emits the prologue; the label is the JDK's body (jump there to run it). */
    private final java.util.function.BiConsumer<MethodVisitor, Label> prologue;
    private volatile Throwable failure;
    private volatile String unsupported;
    private volatile boolean rewrote;

    private JdkClassTransformer(final Class<?> type, final String method, final String descriptor,
                                final java.util.function.BiConsumer<MethodVisitor, Label> prologue) {
        this.type = type;
        this.internalName = Type.getInternalName(type);
        this.method = method;
        this.descriptor = descriptor;
        this.prologue = prologue;
    }

    /**
     * Rewrites {@code ByteBuffer.allocateDirect(int)} to ask the bridge's {@code allocator} first.
     *
     * @throws UnsupportedJdkException when ASM cannot read this JDK's class files
     * @throws IllegalStateException when the rewrite failed; the transformer is removed again
     */
    public static void allocateDirect(final Instrumentation inst) throws Exception {
        allocateDirectPrologue().install(inst);
    }

    /**
     * @return the transformer that puts the prologue in front of {@code ByteBuffer.allocateDirect(int)},
     *         not installed ({@link AllocateDirectRewrite} runs it for a body of another shape)
     */
    static JdkClassTransformer allocateDirectPrologue() {
        return new JdkClassTransformer(ByteBuffer.class, "allocateDirect", "(I)Ljava/nio/ByteBuffer;",
                new java.util.function.BiConsumer<MethodVisitor, Label>() { // a class, not a lambda: none spun in premain
            @Override
            public void accept(final MethodVisitor mv, final Label body) {
            BridgeClassFile.askAllocatorFirst(mv); // then the JDK's body
            }
        });
    }

    /** @return why the last {@link #transform} of the class changed nothing, or {@code null} */
    String problem() {
        final Throwable f = failure;
        return unsupported != null ? unsupported : f != null ? f.toString() : rewrote ? null : "no such method";
    }

    /**
     * Rewrites the JDK cleaner's {@code clean()}: {@code jdk.internal.ref.Cleaner} (JDK 17-25) or
     * {@code java.nio.BufferCleaner$PhantomCleaner} (JDK 26+).
     *
     * @throws ClassNotFoundException when neither cleaner class exists
     * @throws UnsupportedJdkException when ASM cannot read this JDK's class files
     * @throws IllegalStateException when the rewrite failed; the transformer is removed again
     */
    public static void cleanerClean(final Instrumentation inst) throws Exception {
        Class<?> phantom = null;
        try {
            phantom = Class.forName("java.nio.BufferCleaner$PhantomCleaner", false, null);
        } catch (final ClassNotFoundException before26) {
            // 17-25
        }
        final Class<?> cleaner = phantom != null ? phantom : Class.forName("jdk.internal.ref.Cleaner", false, null);
        final String owner = Type.getInternalName(cleaner);
        final boolean list26 = phantom != null;
        new JdkClassTransformer(cleaner, "clean", "()V", new java.util.function.BiConsumer<MethodVisitor, Label>() {
            @Override
            public void accept(final MethodVisitor mv, final Label body) {
            mv.visitFieldInsn(Opcodes.GETSTATIC, BRIDGE, BootstrapBridge.CLEANER_MARK, "Ljava/lang/Object;");
            mv.visitJumpInsn(Opcodes.IFNULL, body);
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            if (list26) {
                mv.visitFieldInsn(Opcodes.GETFIELD, owner, "node", "Ljava/nio/BufferCleaner$CleanerList$Node;");
            } else {
                mv.visitFieldInsn(Opcodes.GETFIELD, owner, "prev", "L" + owner + ";");
            }
            mv.visitFieldInsn(Opcodes.GETSTATIC, BRIDGE, BootstrapBridge.CLEANER_MARK, "Ljava/lang/Object;");
            mv.visitJumpInsn(Opcodes.IF_ACMPNE, body);
            if (list26) {
                mv.visitVarInsn(Opcodes.ALOAD, 0);
                mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/ref/Reference", "clear", "()V", false);
            }
            // thunk instanceof Consumer ? ((Consumer) thunk).accept(this) : thunk.run()
            final Label run = new Label();
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitFieldInsn(Opcodes.GETFIELD, owner, list26 ? "action" : "thunk", "Ljava/lang/Runnable;");
            mv.visitInsn(Opcodes.DUP);
            mv.visitTypeInsn(Opcodes.INSTANCEOF, "java/util/function/Consumer");
            mv.visitJumpInsn(Opcodes.IFEQ, run);
            mv.visitTypeInsn(Opcodes.CHECKCAST, "java/util/function/Consumer");
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, "java/util/function/Consumer", "accept", "(Ljava/lang/Object;)V", true);
            mv.visitInsn(Opcodes.RETURN);
            mv.visitLabel(run);
            mv.visitFrame(Opcodes.F_NEW, 1, new Object[] {owner}, 1, new Object[] {"java/lang/Runnable"});
            mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, "java/lang/Runnable", "run", "()V", true);
            mv.visitInsn(Opcodes.RETURN);
            }
        }).install(inst);
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
        if (failure != null || !rewrote) {
            inst.removeTransformer(this);
            throw new IllegalStateException("rewriting " + type.getName() + "." + method + " failed: "
                + (failure != null ? failure : "no such method"), failure);
        }
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (loader != null || !internalName.equals(className)) {
            return null;
        }
        try {
            final String problem = AllocateDirectRewrite.unreadable(classfileBuffer,
                AllocateDirectRewrite.SIMULATE_CLASS_FILE_VERSION.equals(System.getProperty("kmem4j.simulateUnsupportedJdk")));
            if (problem != null) {
                unsupported = problem;
                return null;
            }
            final byte[] bytes = withPrologue(classfileBuffer, internalName, method, descriptor, prologue);
            if (bytes == null) {
                return null; // install() reports it
            }
            rewrote = true;
            return bytes;
        } catch (final Throwable t) {
            failure = t; // a transformer must not throw; install() reports it
            return null;
        }
    }

    /**
     * Puts {@code prologue} in front of the body of one method of a class file (method body only: no new
     * members, as retransformation requires). The prologue jumps to the label it is given, or falls
     * through, to run the body as written, with an empty operand stack.
     *
     * @param classfile    the class file
     * @param internalName the class's internal name (the frame's {@code this})
     * @param method       the method's name
     * @param descriptor   its descriptor
     * @param prologue     emits the prologue; the label is where the body starts
     * @return the rewritten class file, or {@code null} when the class has no such method
     */
    public static byte[] withPrologue(final byte[] classfile, final String internalName, final String method,
                                      final String descriptor,
                                      final java.util.function.BiConsumer<MethodVisitor, Label> prologue) {
        return rewriteMethod(classfile, method, descriptor, ClassWriter.COMPUTE_MAXS, ClassReader.EXPAND_FRAMES,
            (mv, access) -> new Prologue(mv, initialLocals(internalName, access, descriptor), prologue));
    }

    /**
     * Rewrites one method of a class file: {@code wrap} is given the writer's visitor of that method and
     * its access flags, and returns the visitor the method's code goes through.
     *
     * @return the rewritten class file, or {@code null} when the class has no such method
     */
    static byte[] rewriteMethod(final byte[] classfile, final String method, final String descriptor,
                                final int writerFlags, final int readerFlags,
                                final java.util.function.BiFunction<MethodVisitor, Integer, MethodVisitor> wrap) {
        final ClassReader reader = new ClassReader(classfile);
        final ClassWriter writer = new ClassWriter(reader, writerFlags);
        final boolean[] found = new boolean[1];
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String desc,
                                             final String signature, final String[] exceptions) {
                final MethodVisitor mv = super.visitMethod(access, name, desc, signature, exceptions);
                if (!name.equals(method) || !desc.equals(descriptor)) {
                    return mv;
                }
                found[0] = true;
                return wrap.apply(mv, access);
            }
        }, readerFlags);
        return found[0] ? writer.toByteArray() : null;
    }

    /** The frame's locals at the method's start: {@code this} (instance methods) and the parameters. */
    public static Object[] initialLocals(final String internalName, final int access, final String desc) {
        final java.util.List<Object> locals = new java.util.ArrayList<>();
        if ((access & Opcodes.ACC_STATIC) == 0) {
            locals.add(internalName);
        }
        for (final Type t : Type.getArgumentTypes(desc)) {
            switch (t.getSort()) {
                case Type.BOOLEAN: case Type.BYTE: case Type.CHAR: case Type.SHORT: case Type.INT:
                    locals.add(Opcodes.INTEGER);
                    break;
                case Type.FLOAT:
                    locals.add(Opcodes.FLOAT);
                    break;
                case Type.LONG:
                    locals.add(Opcodes.LONG);
                    break;
                case Type.DOUBLE:
                    locals.add(Opcodes.DOUBLE);
                    break;
                default:
                    locals.add(t.getSort() == Type.ARRAY ? t.getDescriptor() : t.getInternalName());
            }
        }
        return locals.toArray();
    }

    /**
     * Puts the prologue in front of the method's body, then a stack map frame where the body starts
     * (the method's initial frame), unless the body's first instruction has a frame of its own.
     */
    private static final class Prologue extends MethodVisitor {
        private final Object[] locals;
        private final java.util.function.BiConsumer<MethodVisitor, Label> prologue;
        private boolean framePending;

        Prologue(final MethodVisitor mv, final Object[] locals,
                 final java.util.function.BiConsumer<MethodVisitor, Label> prologue) {
            super(Opcodes.ASM9, mv);
            this.locals = locals;
            this.prologue = prologue;
        }

        @Override
        public void visitCode() {
            super.visitCode();
            final Label body = new Label();
            prologue.accept(mv, body);
            mv.visitLabel(body);
            framePending = true;
        }

        @Override
        public void visitFrame(final int type, final int numLocal, final Object[] local, final int numStack,
                               final Object[] stack) {
            framePending = false; // the body's own frame at its first instruction
            super.visitFrame(type, numLocal, local, numStack, stack);
        }

        private void frame() {
            if (framePending) {
                framePending = false;
                mv.visitFrame(Opcodes.F_NEW, locals.length, locals, 0, new Object[0]);
            }
        }

        @Override
        public void visitInsn(final int opcode) {
            frame();
            super.visitInsn(opcode);
        }

        @Override
        public void visitIntInsn(final int opcode, final int operand) {
            frame();
            super.visitIntInsn(opcode, operand);
        }

        @Override
        public void visitVarInsn(final int opcode, final int var) {
            frame();
            super.visitVarInsn(opcode, var);
        }

        @Override
        public void visitTypeInsn(final int opcode, final String t) {
            frame();
            super.visitTypeInsn(opcode, t);
        }

        @Override
        public void visitFieldInsn(final int opcode, final String owner, final String name, final String desc) {
            frame();
            super.visitFieldInsn(opcode, owner, name, desc);
        }

        @Override
        public void visitMethodInsn(final int opcode, final String owner, final String name, final String desc,
                                    final boolean itf) {
            frame();
            super.visitMethodInsn(opcode, owner, name, desc, itf);
        }

        @Override
        public void visitInvokeDynamicInsn(final String name, final String desc, final net.bytebuddy.jar.asm.Handle bsm,
                                           final Object... bsmArgs) {
            frame();
            super.visitInvokeDynamicInsn(name, desc, bsm, bsmArgs);
        }

        @Override
        public void visitJumpInsn(final int opcode, final Label label) {
            frame();
            super.visitJumpInsn(opcode, label);
        }

        @Override
        public void visitLdcInsn(final Object value) {
            frame();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIincInsn(final int var, final int increment) {
            frame();
            super.visitIincInsn(var, increment);
        }

        @Override
        public void visitTableSwitchInsn(final int min, final int max, final Label dflt, final Label... labels) {
            frame();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(final Label dflt, final int[] keys, final Label[] labels) {
            frame();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMultiANewArrayInsn(final String desc, final int dims) {
            frame();
            super.visitMultiANewArrayInsn(desc, dims);
        }
    }
}
