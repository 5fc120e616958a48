package io.kmem4j.agent.bridge;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The only kmem4j class visible to {@code java.base} and to every class loader:
 * {@code java.nio.Kmem4jBridge}, defined inside the {@code java.nio} package at run time, holding
 * JDK-typed fields only:
 *
 * <pre>
 *   public final class java.nio.Kmem4jBridge {
 *       public static volatile IntFunction allocator;  // allocateDirect: capacity -> ByteBuffer, or null for "JDK"
 *       public static volatile LongFunction explicit;  // pool allocation: size -> explicit ByteBuffer, or null for "the pool's own"
 *       public static volatile Predicate release;      // pool release: kmem4j's buffer released now -> true (skip the body)
 *       public static volatile Predicate releaseThenOriginal; // the same for +original releases (see pool.PoolReleaseAdvice)
 *       public static volatile BiFunction resize;      // pool resize: (ByteBuffer, Long) -> see pool.PoolResizeAdvice
 *       public static volatile BiConsumer resized;     // pool resize done: (what resize answered, the body's result or null)
 *       public static volatile Object cleanerMark;     // the mark of kmem4j's cleaners outside the JDK's list (see JdkClassTransformer)
 *       public static volatile UnaryOperator bufferPools = UnaryOperator.identity(); // the platform's buffer pools -> the same with kmem4j's (see PlatformBufferPool)
 *       public static ByteBuffer allocateDirectJdk(int capacity) { return new DirectByteBuffer(capacity); }
 *   }
 * </pre>
 *
 * Advice inlined into {@code ByteBuffer.allocateDirect} and into pool methods reads these fields; it
 * can see only bootstrap types, so the agent's classes stay on their own class loader.
 * {@code allocateDirectJdk} is the JDK's own {@code allocateDirect} body, for call sites in excluded
 * callers. A second agent instance (attach after {@code -javaagent}) finds the class already defined
 * and reuses it.
 */
public final class BootstrapBridge {
    static final String CLASS_NAME = "java.nio.Kmem4jBridge";
    static final String FIELD_NAME = "allocator";
    static final String EXPLICIT = "explicit";
    static final String RELEASE = "release";
    static final String RELEASE_THEN_ORIGINAL = "releaseThenOriginal";
    static final String RESIZE = "resize";
    static final String RESIZED = "resized";
    static final String CLEANER_MARK = "cleanerMark";
    static final String BUFFER_POOLS = "bufferPools";
    public static final String JDK_ALLOCATE = "allocateDirectJdk";

    /** The bridge's members, resolved and shape-checked. */
    public static final class Members {
        public final Field allocator;
        public final Field explicit;
        public final Field release;
        public final Field releaseThenOriginal;
        public final Field resize;
        public final Field resized;
        public final Field cleanerMark;
        public final Field bufferPools;
        public final Method allocateDirectJdk;

        private Members(final Class<?> bridge) throws ReflectiveOperationException {
            allocator = field(bridge, FIELD_NAME, IntFunction.class);
            explicit = field(bridge, EXPLICIT, LongFunction.class);
            release = field(bridge, RELEASE, Predicate.class);
            releaseThenOriginal = field(bridge, RELEASE_THEN_ORIGINAL, Predicate.class);
            resize = field(bridge, RESIZE, BiFunction.class);
            resized = field(bridge, RESIZED, BiConsumer.class);
            cleanerMark = field(bridge, CLEANER_MARK, Object.class);
            bufferPools = field(bridge, BUFFER_POOLS, UnaryOperator.class);
            allocateDirectJdk = bridge.getMethod(JDK_ALLOCATE, int.class);
        }

        private static Field field(final Class<?> bridge, final String name, final Class<?> type)
            throws NoSuchFieldException {
            final Field f = bridge.getField(name);
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != type) {
                throw new NoSuchFieldException(CLASS_NAME + "." + name + " has an unexpected shape: " + f);
            }
            return f;
        }
    }

    private BootstrapBridge() {
    }

    /**
     * The bridge's class file, written with the ASM that ships inside ByteBuddy (a few fields and one
     * method need no more; ByteBuddy's type builder would cost a few hundred milliseconds of start-up).
     */
    static byte[] classBytes() {
        final ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER,
            CLASS_NAME.replace('.', '/'), null, "java/lang/Object", null);
        final int psv = Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC | Opcodes.ACC_VOLATILE;
        cw.visitField(psv, FIELD_NAME, Type.getDescriptor(IntFunction.class), null, null).visitEnd();
        cw.visitField(psv, EXPLICIT, Type.getDescriptor(LongFunction.class), null, null).visitEnd();
        cw.visitField(psv, RELEASE, Type.getDescriptor(Predicate.class), null, null).visitEnd();
        cw.visitField(psv, RELEASE_THEN_ORIGINAL, Type.getDescriptor(Predicate.class), null, null).visitEnd();
        cw.visitField(psv, RESIZE, Type.getDescriptor(BiFunction.class), null, null).visitEnd();
        cw.visitField(psv, RESIZED, Type.getDescriptor(BiConsumer.class), null, null).visitEnd();
        cw.visitField(psv, CLEANER_MARK, Type.getDescriptor(Object.class), null, null).visitEnd();
        cw.visitField(psv, BUFFER_POOLS, Type.getDescriptor(UnaryOperator.class), null, null).visitEnd();
        final MethodVisitor clinit = cw.visitMethod(Opcodes.ACC_STATIC, "<clinit>", "()V", null, null);
        clinit.visitCode();
        clinit.visitMethodInsn(Opcodes.INVOKESTATIC, Type.getInternalName(UnaryOperator.class), "identity",
            "()" + Type.getDescriptor(UnaryOperator.class), true);
        clinit.visitFieldInsn(Opcodes.PUTSTATIC, CLASS_NAME.replace('.', '/'), BUFFER_POOLS,
            Type.getDescriptor(UnaryOperator.class));
        clinit.visitInsn(Opcodes.RETURN);
        clinit.visitMaxs(0, 0);
        clinit.visitEnd();
        final MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, JDK_ALLOCATE,
            "(I)Ljava/nio/ByteBuffer;", null, null);
        mv.visitCode();
        mv.visitTypeInsn(Opcodes.NEW, "java/nio/DirectByteBuffer");
        mv.visitInsn(Opcodes.DUP);
        mv.visitVarInsn(Opcodes.ILOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/nio/DirectByteBuffer", "<init>", "(I)V", false);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /**
     * @return the bridge's members, defining the class on first use
     * @throws ReflectiveOperationException when {@code java.nio} is not open to the agent, or a bridge
     *         of another shape is already defined
     */
    public static Members members() throws ReflectiveOperationException {
        Class<?> bridge;
        try {
            bridge = Class.forName(CLASS_NAME, false, null);
        } catch (final ClassNotFoundException notYet) {
            final byte[] bytes = classBytes();
            try {
                bridge = MethodHandles.privateLookupIn(ByteBuffer.class, MethodHandles.lookup()).defineClass(bytes);
            } catch (final LinkageError raced) {
                bridge = Class.forName(CLASS_NAME, false, null);
            }
        }
        return new Members(bridge);
    }
}
