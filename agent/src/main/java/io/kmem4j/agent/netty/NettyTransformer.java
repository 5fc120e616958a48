package io.kmem4j.agent.netty;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

import io.kmem4j.agent.bridge.BridgeField;
import io.kmem4j.agent.bridge.JdkClassTransformer;
import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.agent.pool.PoolTransformer;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * {@code presets=netty-allocator}: rewrites {@code newDirectBuffer(int, int)} of Netty's
 * {@code PooledByteBufAllocator} and {@code AdaptiveByteBufAllocator} (4.1 and 4.2, and relocated copies
 * such as gRPC's {@code io.grpc.netty.shaded.io.netty.buffer}) with a prologue ({@link #prologue}; the
 * ASM inside ByteBuddy, as {@link JdkClassTransformer}: ByteBuddy's own type machinery cost some
 * 0.25 s of the first Netty class load), when
 * they load and, at install, by retransformation of those already loaded. The prologue changes no
 * field, signature or modifier, so a retransformation is allowed. {@code UnpooledByteBufAllocator}
 * is left as written: its users may rely on GC to free buffers they never release, which explicit
 * blocks would leak (its buffers reach kmem4j's tracked flavour through {@code allocateDirect}).
 *
 * <p>Recognised by name suffix, so any relocation prefix works. Every other class costs two
 * {@code endsWith} tests. Threads: whichever thread loads or retransforms a class.
 */
public final class NettyTransformer implements ClassFileTransformer {
    static final List<String> ALLOCATORS = List.of("io/netty/buffer/PooledByteBufAllocator",
        "io/netty/buffer/AdaptiveByteBufAllocator");

    private static final String METHOD = "newDirectBuffer";

    /**
     * Whether the prologue boxes the capacities with {@code new Long(long)}: where this JDK still has that
     * constructor (deprecated for removal since 16, present on 17 to 27), else with {@code Long.valueOf}.
     */
    static final boolean FRESH_BOX = hasLongConstructor();

    private final BridgeField hook;
    private final boolean freshBox;
    public final LongAdder rewrittenMethods = new LongAdder();
    public final LongAdder failures = new LongAdder();

    public NettyTransformer(final BridgeField hook) {
        this(hook, FRESH_BOX);
    }

    /** @param freshBox {@link #FRESH_BOX}, or false for the {@code Long.valueOf} box (tests) */
    NettyTransformer(final BridgeField hook, final boolean freshBox) {
        this.hook = hook;
        this.freshBox = freshBox;
    }

    private static boolean hasLongConstructor() {
        try {
            Long.class.getConstructor(long.class); // public constructors only
            return true;
        } catch (final NoSuchMethodException | SecurityException removed) {
            return false;
        }
    }

    /** @return true for a Netty allocator whose {@code newDirectBuffer} this rewrites (internal name) */
    static boolean rewrites(final String internalName) {
        for (final String suffix : ALLOCATORS) {
            if (internalName.endsWith(suffix)) {
                final int prefix = internalName.length() - suffix.length();
                return prefix == 0 || internalName.charAt(prefix - 1) == '/';
            }
        }
        return false;
    }

    /** Registers the transformer and retransforms the allocators already loaded (attach). */
    public void install(final Instrumentation inst) {
        inst.addTransformer(this, true);
        PoolTransformer.retransformLoaded(inst, NettyTransformer::rewrites, failures);
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (className == null || loader == NettyTransformer.class.getClassLoader() || !rewrites(className)) {
            return null;
        }
        try {
            final String byteBuf = className.substring(0, className.lastIndexOf('/') + 1) + "ByteBuf";
            final String descriptor = "(II)L" + byteBuf + ";";
            final Object[] locals = JdkClassTransformer.initialLocals(className, 0, descriptor);
            final byte[] bytes = JdkClassTransformer.withPrologue(classfileBuffer, className, METHOD, descriptor,
                (mv, body) -> prologue(mv, byteBuf, locals));
            if (bytes == null) {
                AgentLog.get(NettyTransformer.class).debug("{} has no {}{}; left as written", className.replace('/', '.'),
                    METHOD, descriptor);
                return null;
            }
            rewrittenMethods.increment();
            return bytes;
        } catch (final Throwable t) {
            failures.increment(); // a transformer must not throw: the class stays as written
            try {
                AgentLog.get(NettyTransformer.class).warn("cannot rewrite {}; it stays as written: {}",
                    className.replace('/', '.'), t.toString());
            } catch (final Throwable ignored) {
                // nothing more to do
            }
            return null;
        }
    }

    /**
     * The prologue of {@code newDirectBuffer(int initialCapacity, int maxCapacity)}; it falls through to
     * Netty's body when the hook or its answer is null:
     * <pre>
     *   BiFunction h = Kmem4jBridge.nettyBuffer;
     *   if (h != null) {
     *       Object b = h.apply(this, new Long((long) maxCapacity &lt;&lt; 32 | (initialCapacity &amp; 0xFFFFFFFFL)));
     *       if (b != null) return (ByteBuf) b;
     *   }
     * </pre>
     * Both capacities travel as one {@code long}, boxed with {@code new Long(...)} where the JDK has that
     * constructor ({@link #FRESH_BOX}). With {@code Long.valueOf} the box was garbage on JDK 17 (24 B a
     * buffer; JFR counted 114 MB of {@code Long}s in 10 s of an HTTP server), most likely because valueOf's
     * branch to its cache keeps C2's escape analysis from dropping the allocation. With the fresh box JDK 17
     * drops it in the forks measured ({@code RingBenchmark.ring1}, {@code kmem4jNetty}, 256 B and 4 KiB,
     * {@code -prof gc}, four forks each: 24.0 B/op before, under 0.02 after; one fork of an earlier run
     * kept it). JDK 25 and 27 read the same either way (none at 256 B, a box at 4 KiB).
     */
    private void prologue(final MethodVisitor mv, final String byteBuf, final Object[] locals) {
        final Label none = new Label();
        mv.visitFieldInsn(Opcodes.GETSTATIC, hook.field().getDeclaringClass().getName().replace('.', '/'),
            hook.field().getName(), "Ljava/util/function/BiFunction;");
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        if (freshBox) {
            mv.visitTypeInsn(Opcodes.NEW, "java/lang/Long");
            mv.visitInsn(Opcodes.DUP);
        }
        mv.visitVarInsn(Opcodes.ILOAD, 2);
        mv.visitInsn(Opcodes.I2L);
        mv.visitIntInsn(Opcodes.BIPUSH, 32);
        mv.visitInsn(Opcodes.LSHL);
        mv.visitVarInsn(Opcodes.ILOAD, 1);
        mv.visitInsn(Opcodes.I2L);
        mv.visitLdcInsn(0xFFFF_FFFFL);
        mv.visitInsn(Opcodes.LAND);
        mv.visitInsn(Opcodes.LOR);
        if (freshBox) {
            mv.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/lang/Long", "<init>", "(J)V", false);
        } else {
            mv.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/Long", "valueOf", "(J)Ljava/lang/Long;", false);
        }
        mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, "java/util/function/BiFunction", "apply",
            "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;", true);
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNULL, none);
        mv.visitTypeInsn(Opcodes.CHECKCAST, byteBuf);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitLabel(none); // the hook or its answer, null
        mv.visitFrame(Opcodes.F_NEW, locals.length, locals, 1, new Object[] {"java/lang/Object"});
        mv.visitInsn(Opcodes.POP);
    }
}
