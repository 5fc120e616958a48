package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

import io.kmem4j.agent.bridge.BridgeFields;
import io.netty.buffer.PooledByteBufAllocator;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * The prologue {@link NettyTransformer} puts in front of Netty's {@code newDirectBuffer(int, int)}: both
 * capacities reach the hook as one {@code long}, in a box made with {@code new Long}, which C2's escape
 * analysis can drop once the hook is inlined ({@code Long.valueOf}'s cache branch kept it: 24 B a
 * buffer; the figure itself is JMH's, {@code RingBenchmark.ring1} with {@code -prof gc}).
 */
class NettyPrologueTest {
    /** The hook the rewritten allocator reads, as it reads {@code Kmem4jBridge.nettyBuffer}. */
    public static final class Hook {
        public static volatile BiFunction<Object, Object, Object> hook;

        private Hook() {
        }
    }

    private static final String ALLOCATOR = "io/netty/buffer/PooledByteBufAllocator";

    private static byte[] rewritten() throws Exception {
        return rewritten(NettyTransformer.FRESH_BOX);
    }

    private static byte[] rewritten(final boolean freshBox) throws Exception {
        final byte[] original;
        try (InputStream in = PooledByteBufAllocator.class.getResourceAsStream("PooledByteBufAllocator.class")) {
            original = in.readAllBytes();
        }
        final NettyTransformer t = new NettyTransformer(
            BridgeFields.of(Hook.class.getDeclaredField("hook")), freshBox);
        final byte[] bytes = t.transform(null, new ClassLoader() { }, ALLOCATOR, null, null, original);
        assertThat(bytes).as("newDirectBuffer(int, int) rewritten").isNotNull();
        return bytes;
    }

    /** @return "owner.name" of every method call in {@code newDirectBuffer(II)}, and "new T" of every NEW */
    private static List<String> callsOfNewDirectBuffer(final byte[] classFile) {
        final List<String> calls = new ArrayList<>();
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(final int access, final String name, final String descriptor,
                                             final String signature, final String[] exceptions) {
                if (!name.equals("newDirectBuffer") || !descriptor.startsWith("(II)")) {
                    return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitMethodInsn(final int opcode, final String owner, final String n,
                                                final String d, final boolean itf) {
                        calls.add(owner + "." + n + d);
                    }

                    @Override
                    public void visitTypeInsn(final int opcode, final String type) {
                        if (opcode == Opcodes.NEW) {
                            calls.add("new " + type);
                        }
                    }
                };
            }
        }, 0);
        return calls;
    }

    @Test
    void boxesTheCapacitiesWithANewLongNotWithValueOf() throws Exception {
        assertThat(NettyTransformer.FRESH_BOX).as("Long(long) exists on every JDK of the matrix").isTrue();
        final List<String> calls = callsOfNewDirectBuffer(rewritten());
        assertThat(calls).contains("new java/lang/Long", "java/lang/Long.<init>(J)V")
            .doesNotContain("java/lang/Long.valueOf(J)Ljava/lang/Long;");
        assertThat(calls.indexOf("java/lang/Long.<init>(J)V"))
            .as("boxed before the hook is called")
            .isLessThan(calls.indexOf("java/util/function/BiFunction.apply(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;"));
    }

    @Test
    void withoutTheConstructorItBoxesWithValueOfAsBefore() throws Exception {
        final List<String> calls = callsOfNewDirectBuffer(rewritten(false));
        assertThat(calls).contains("java/lang/Long.valueOf(J)Ljava/lang/Long;")
            .doesNotContain("new java/lang/Long", "java/lang/Long.<init>(J)V");
    }

    @Test
    void theHookGetsTheAllocatorAndBothCapacitiesAndItsAnswerIsReturned() throws Throwable {
        theHookGetsTheAllocatorAndBothCapacities(true);
    }

    @Test
    void soItDoesWithTheValueOfBox() throws Throwable {
        theHookGetsTheAllocatorAndBothCapacities(false);
    }

    private static void theHookGetsTheAllocatorAndBothCapacities(final boolean freshBox) throws Throwable {
        final URL[] nettyJar = {PooledByteBufAllocator.class.getProtectionDomain().getCodeSource().getLocation()};
        try (Rewriting loader = new Rewriting(nettyJar)) {
            final Class<?> allocatorClass = loader.define(rewritten(freshBox));
            final Object allocator = allocatorClass.getConstructor(boolean.class).newInstance(true);
            final Class<?> byteBuf = Class.forName("io.netty.buffer.ByteBuf", false, loader);
            final Object answer = Class.forName("io.netty.buffer.Unpooled", true, loader)
                .getMethod("buffer", int.class).invoke(null, 1);
            final Method newDirectBuffer = allocatorClass.getDeclaredMethod("newDirectBuffer", int.class, int.class);
            newDirectBuffer.setAccessible(true);
            final Object[] seen = new Object[2];
            Hook.hook = (a, capacities) -> {
                seen[0] = a;
                seen[1] = capacities;
                return answer;
            };
            try {
                assertThat(newDirectBuffer.invoke(allocator, 300, 70_000)).isSameAs(answer);
                assertThat(seen[0]).isSameAs(allocator);
                assertThat(seen[1]).isInstanceOf(Long.class).isEqualTo((70_000L << 32) | 300L);

                Hook.hook = (a, capacities) -> null; // null: Netty's own body runs
                final Object own = newDirectBuffer.invoke(allocator, 64, 128);
                assertThat(own).isNotSameAs(answer);
                assertThat(byteBuf.getMethod("capacity").invoke(own)).isEqualTo(64);
                assertThat(byteBuf.getMethod("maxCapacity").invoke(own)).isEqualTo(128);
                assertThat(byteBuf.getMethod("release").invoke(own)).isEqualTo(true);
            } finally {
                Hook.hook = null;
            }
        }
    }

    /** Netty's own copy, child first, with the rewritten allocator defined before Netty's would load. */
    static final class Rewriting extends NettyChildFirstTest.ChildFirst {
        Rewriting(final URL[] urls) {
            super(urls);
        }

        Class<?> define(final byte[] bytes) {
            return defineClass(ALLOCATOR.replace('/', '.'), bytes, 0, bytes.length);
        }
    }
}
