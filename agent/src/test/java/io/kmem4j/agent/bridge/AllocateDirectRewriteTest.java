package io.kmem4j.agent.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * The rewrite of {@code ByteBuffer.allocateDirect(int)} without a bytecode library, read back with ASM:
 * its body becomes the bridge call, every other method and member stays byte for byte what it was,
 * and a body of any other shape is left to the ASM prologue. (On a real JVM, every integration test
 * runs under it; ForeignRetransformationIT's other agent first gives it a body of another shape.)
 */
class AllocateDirectRewriteTest {

    private static byte[] byteBufferClassFile() throws Exception {
        try (InputStream in = ByteBuffer.class.getResourceAsStream("ByteBuffer.class")) {
            return in.readAllBytes();
        }
    }

    /** Each method's instructions as text (opcode, operands), by name and descriptor. */
    private static Map<String, List<String>> methods(final byte[] classFile) {
        final Map<String, List<String>> methods = new LinkedHashMap<>();
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String descriptor,
                                             final String signature, final String[] exceptions) {
                final List<String> code = new ArrayList<>();
                methods.put(access + " " + name + descriptor, code);
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitInsn(final int opcode) {
                        code.add("insn " + opcode);
                    }

                    @Override
                    public void visitVarInsn(final int opcode, final int var) {
                        code.add("var " + opcode + " " + var);
                    }

                    @Override
                    public void visitTypeInsn(final int opcode, final String type) {
                        code.add("type " + opcode + " " + type);
                    }

                    @Override
                    public void visitFieldInsn(final int opcode, final String owner, final String n, final String d) {
                        code.add("field " + opcode + " " + owner + "." + n + d);
                    }

                    @Override
                    public void visitMethodInsn(final int opcode, final String owner, final String n, final String d,
                                                final boolean itf) {
                        code.add("method " + opcode + " " + owner + "." + n + d);
                    }

                    @Override
                    public void visitLdcInsn(final Object value) {
                        code.add("ldc " + value);
                    }

                    @Override
                    public void visitJumpInsn(final int opcode, final net.bytebuddy.jar.asm.Label label) {
                        code.add("jump " + opcode);
                    }

                    @Override
                    public void visitLineNumber(final int line, final net.bytebuddy.jar.asm.Label start) {
                        code.add("line " + line);
                    }

                    @Override
                    public void visitMaxs(final int maxStack, final int maxLocals) {
                        code.add("maxs " + maxStack + " " + maxLocals);
                    }
                };
            }
        }, 0);
        return methods;
    }

    @Test
    void theBodyBecomesTheBridgeCallAndNothingElseChanges() throws Exception {
        final byte[] original = byteBufferClassFile();
        final byte[] rewritten = AllocateDirectRewrite.rewrite(original);
        assertThat(rewritten).as("this JDK's allocateDirect is the known body").isNotNull();
        final Map<String, List<String>> before = methods(original);
        final Map<String, List<String>> after = methods(rewritten);
        final String key = "9 allocateDirect(I)Ljava/nio/ByteBuffer;";
        final String line = before.get(key).get(0);
        assertThat(line).as("the JDK's body has a line").startsWith("line ");
        assertThat(before.get(key)).containsExactly(line, "type 187 java/nio/DirectByteBuffer", "insn 89", "var 21 0",
            "method 183 java/nio/DirectByteBuffer.<init>(I)V", "insn 176", "maxs 3 1");
        assertThat(after.get(key)).as("the same line: stack traces read as before").containsExactly(line, "var 21 0",
            "method 184 java/nio/Kmem4jBridge.allocateDirect(I)Ljava/nio/ByteBuffer;", "insn 176", "maxs 1 1");
        assertThat(after.keySet()).as("the same methods, in the same order").containsExactlyElementsOf(before.keySet());
        for (final String m : before.keySet()) {
            if (!m.equals(key)) {
                assertThat(after.get(m)).as(m).isEqualTo(before.get(m));
            }
        }
        // ASM writes it back without complaint (frames and all) and finds the same shape
        final ClassWriter w = new ClassWriter(0);
        new ClassReader(rewritten).accept(w, 0);
        assertThat(methods(w.toByteArray())).isEqualTo(after);
        assertThat(new ClassReader(rewritten).getClassName()).isEqualTo("java/nio/ByteBuffer");
    }

    /** ByteBuffer's class file with a NOP in front of allocateDirect's body: another agent's advice, say. */
    private static byte[] anotherShape() throws Exception {
        final ClassReader reader = new ClassReader(byteBufferClassFile());
        final ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String descriptor,
                                             final String signature, final String[] exceptions) {
                final MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
                return !name.equals("allocateDirect") ? mv : new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitCode() {
                        super.visitCode();
                        super.visitInsn(Opcodes.NOP);
                    }
                };
            }
        }, 0);
        return writer.toByteArray();
    }

    @Test
    void aBodyOfAnotherShapeIsLeftAlone() throws Exception {
        assertThat(AllocateDirectRewrite.rewrite(anotherShape())).isNull();
    }

    /**
     * The installed transformer, offered a body of another shape (another agent changed it, now or at a
     * later retransformation): ASM's prologue in front of that body, not nothing (kmem4j would silently
     * stop serving).
     */
    @Test
    void theTransformerPutsThePrologueInFrontOfABodyOfAnotherShape() throws Exception {
        final byte[] other = anotherShape();
        final byte[] out = new AllocateDirectRewrite().transform(null, null, "java/nio/ByteBuffer", ByteBuffer.class,
            null, other);
        assertThat(out).as("rewritten, with the prologue").isNotNull();
        final List<String> code = methods(out).get("9 allocateDirect(I)Ljava/nio/ByteBuffer;");
        assertThat(code.get(0)).isEqualTo("field 178 java/nio/Kmem4jBridge.allocatorLjava/util/function/IntFunction;");
        assertThat(code).as("the other body kept, after the prologue").contains("insn 0",
            "method 183 java/nio/DirectByteBuffer.<init>(I)V");
        assertThat(new AllocateDirectRewrite().transform(null, null, "java/nio/ByteBuffer", ByteBuffer.class, null,
            byteBufferClassFile())).as("the JDK's body: swapped, as install does").isEqualTo(
            AllocateDirectRewrite.rewrite(byteBufferClassFile()));
        assertThat(new AllocateDirectRewrite().transform(null, null, "java/nio/CharBuffer", null, null, other))
            .as("any other class: untouched").isNull();
    }

    @Test
    void aClassWithoutTheMethodIsLeftAlone() throws Exception {
        try (InputStream in = Object.class.getResourceAsStream("Object.class")) {
            assertThat(AllocateDirectRewrite.rewrite(in.readAllBytes())).isNull();
        }
    }

    @Test
    void anUnknownConstantIsRefusedWithItsTag() throws Exception {
        final byte[] b = byteBufferClassFile().clone();
        b[10] = 99; // the first constant's tag
        assertThatThrownBy(() -> AllocateDirectRewrite.rewrite(b)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("constant pool tag 99 at entry 1");
    }

    /** The bridge's allocateDirect, as the build wrote it: the allocator first, then the JDK's body. */
    @Test
    void theBridgeAsksTheAllocatorFirstThenRunsTheJdksBody() throws Exception {
        final Map<String, List<String>> bridge = methods(BridgeClassFile.classBytes());
        assertThat(bridge.get("9 allocateDirect(I)Ljava/nio/ByteBuffer;")).containsExactly(
            "field 178 java/nio/Kmem4jBridge.allocatorLjava/util/function/IntFunction;", "insn 89", "jump 198",
            "var 21 0", "method 185 java/util/function/IntFunction.apply(I)Ljava/lang/Object;", "insn 89", "jump 198",
            "type 192 java/nio/ByteBuffer", "insn 176", "insn 87", "type 187 java/nio/DirectByteBuffer", "insn 89",
            "var 21 0", "method 183 java/nio/DirectByteBuffer.<init>(I)V", "insn 176", "maxs 3 1");
        try (InputStream in = BootstrapBridge.class.getResourceAsStream(BootstrapBridge.CLASS_FILE)) {
            assertThat(in).as("the build wrote the bridge's class file (exec-maven-plugin, process-classes)").isNotNull();
            assertThat(in.readAllBytes()).isEqualTo(BridgeClassFile.classBytes());
        }
    }
}
