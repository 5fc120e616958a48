package io.kmem4j.agent.bridge;

import java.io.InputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.management.ObjectName;

import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The platform buffer-pool list's rewrite: what the list answers, and the rewritten class file. */
class PlatformBufferPoolTest {

    /** A pool for the list. */
    private static final BufferPoolMXBean POOL = pool("kmem4j");

    private static BufferPoolMXBean pool(final String name) {
        return new BufferPoolMXBean() {
            @Override
            public String getName() {
                return name;
            }

            @Override
            public long getCount() {
                return 1;
            }

            @Override
            public long getTotalCapacity() {
                return 2;
            }

            @Override
            public long getMemoryUsed() {
                return 3;
            }

            @Override
            public ObjectName getObjectName() {
                return null;
            }
        };
    }

    private static UnaryOperator<Object> operator(final BufferPoolMXBean pool) throws Exception {
        return operator(pool, null);
    }

    private static UnaryOperator<Object> operator(final BufferPoolMXBean pool, final Runnable onPlatformServer)
        throws Exception {
        final var c = PlatformBufferPool.class.getDeclaredConstructor(BufferPoolMXBean.class, Runnable.class);
        c.setAccessible(true);
        return c.newInstance(pool, onPlatformServer);
    }

    /** The beans' registration starts when the platform MBean server is created, not at every read of the list. */
    @Test
    void aReadOutsideThePlatformServersCreationDoesNotStartTheRegistration() throws Exception {
        final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        final UnaryOperator<Object> op = operator(POOL, runs::incrementAndGet);
        op.apply(ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class));
        assertThat(runs.get()).as("registrations started by a plain read of the list").isZero();
    }

    @Test
    void theJdksPoolsThenKmem4jsInANewListTheJdksUntouched() throws Exception {
        final List<BufferPoolMXBean> jdks = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);
        final List<BufferPoolMXBean> before = new ArrayList<>(jdks);
        @SuppressWarnings("unchecked")
        final List<Object> answered = (List<Object>) operator(POOL).apply(jdks);
        assertThat(answered).hasSize(jdks.size() + 1).endsWith(POOL).startsWith(jdks.toArray());
        assertThat(jdks).isEqualTo(before);
        assertThat(operator(POOL).apply(answered)).as("once only").isSameAs(answered);
    }

    @Test
    void anythingElseOrAFailureAnswersTheJdksValueUnchanged() throws Exception {
        assertThat(operator(POOL).apply(null)).isNull();
        assertThat(operator(POOL).apply("not a list")).isEqualTo("not a list");
        final List<Object> throwing = new ArrayList<>() {
            @Override
            public boolean contains(final Object o) {
                throw new IllegalStateException("boom");
            }
        };
        assertThat(operator(POOL).apply(throwing)).isSameAs(throwing);
    }

    private static byte[] helperClassFile() throws Exception {
        try (InputStream in = ModuleLayer.boot().findModule("java.management").orElseThrow()
            .getResourceAsStream(BufferPoolListTransformer.HELPER + ".class")) {
            return in.readAllBytes();
        }
    }

    /** Per method of {@code classFile}: its instructions' opcodes and owners, in order. */
    private static List<String> instructions(final byte[] classFile, final String method) {
        final List<String> out = new ArrayList<>();
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String descriptor,
                                             final String signature, final String[] exceptions) {
                if (!name.equals(method)) {
                    return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitInsn(final int opcode) {
                        out.add(String.valueOf(opcode));
                    }

                    @Override
                    public void visitFieldInsn(final int opcode, final String owner, final String name, final String d) {
                        out.add(opcode + " " + owner + "." + name);
                    }

                    @Override
                    public void visitMethodInsn(final int opcode, final String owner, final String name, final String d,
                                                final boolean itf) {
                        out.add(opcode + " " + owner + "." + name);
                    }

                    @Override
                    public void visitTypeInsn(final int opcode, final String type) {
                        out.add(opcode + " " + type);
                    }
                };
            }
        }, 0);
        return out;
    }

    @Test
    void everyReturnOfTheListGoesThroughTheBridgeAndNothingElseChanges() throws Exception {
        final byte[] original = helperClassFile();
        final byte[] rewritten = BufferPoolListTransformer.Asm.rewrite(original);
        final List<String> before = instructions(original, BufferPoolListTransformer.METHOD);
        final List<String> after = instructions(rewritten, BufferPoolListTransformer.METHOD);
        final String areturn = String.valueOf(Opcodes.ARETURN);
        final long returns = before.stream().filter(areturn::equals).count();
        assertThat(returns).isPositive();
        assertThat(after).hasSize(before.size() + 4 * (int) returns);
        for (int i = 0; i < after.size(); i++) {
            if (after.get(i).equals(areturn)) {
                assertThat(after.subList(i - 4, i)).containsExactly(
                    Opcodes.GETSTATIC + " java/nio/Kmem4jBridge.bufferPools", String.valueOf(Opcodes.SWAP),
                    Opcodes.INVOKEINTERFACE + " java/util/function/UnaryOperator.apply",
                    Opcodes.CHECKCAST + " java/util/List");
            }
        }
        assertThat(instructions(rewritten, "getPlatformMXBeans")).isEqualTo(instructions(original, "getPlatformMXBeans"));
        assertThat(instructions(rewritten, "createBufferPoolMXBean"))
            .isEqualTo(instructions(original, "createBufferPoolMXBean"));
    }

    @Test
    void aClassWithoutTheMethodIsRefused() throws Exception {
        try (InputStream in = Object.class.getResourceAsStream("Object.class")) {
            final byte[] object = in.readAllBytes();
            assertThatThrownBy(() -> BufferPoolListTransformer.Asm.rewrite(object))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("getBufferPoolMXBeans");
        }
    }

    @Test
    void theTransformerLooksAtThatOneBootClassOnly() throws Exception {
        final BufferPoolListTransformer t = new BufferPoolListTransformer();
        final byte[] original = helperClassFile();
        assertThat(t.transform(null, ClassLoader.getSystemClassLoader(), BufferPoolListTransformer.HELPER, null, null,
            original)).isNull();
        assertThat(t.transform(null, null, "java/nio/ByteBuffer", null, null, original)).isNull();
        assertThat(t.rewritten()).isFalse();
        assertThat(t.transform(null, null, BufferPoolListTransformer.HELPER, null, null, original)).isNotNull();
        assertThat(t.rewritten()).isTrue();
        assertThat(t.failure()).isNull();
    }
}
