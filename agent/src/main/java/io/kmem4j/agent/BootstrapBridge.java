package io.kmem4j.agent;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.function.IntFunction;

import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The only kmem4j class visible to {@code java.base}: {@code java.nio.Kmem4jBridge}, defined inside
 * the {@code java.nio} package at run time, holding one JDK-typed field:
 *
 * <pre>
 *   public final class java.nio.Kmem4jBridge {
 *       public static volatile IntFunction allocator;   // capacity -> ByteBuffer, or null for "JDK"
 *   }
 * </pre>
 *
 * The advice inlined into {@code ByteBuffer.allocateDirect} reads this field; it can see only
 * bootstrap types, so the agent's classes stay on their own class loader. A second agent instance
 * (attach after {@code -javaagent}) finds the class already defined and reuses it.
 */
final class BootstrapBridge {
    static final String CLASS_NAME = "java.nio.Kmem4jBridge";
    static final String FIELD_NAME = "allocator";

    private BootstrapBridge() {
    }

    /**
     * The bridge's class file, written with the ASM that ships inside ByteBuddy (a one-field class
     * needs no more; ByteBuddy's type builder would cost a few hundred milliseconds of start-up).
     */
    static byte[] classBytes() {
        final ClassWriter cw = new ClassWriter(0);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER,
            CLASS_NAME.replace('.', '/'), null, "java/lang/Object", null);
        cw.visitField(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC | Opcodes.ACC_VOLATILE, FIELD_NAME,
            Type.getDescriptor(IntFunction.class), null, null).visitEnd();
        cw.visitEnd();
        return cw.toByteArray();
    }

    /**
     * @return the bridge's {@code allocator} field, defining the class on first use
     * @throws ReflectiveOperationException when {@code java.nio} is not open to the agent
     */
    static Field allocatorField() throws ReflectiveOperationException {
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
        final Field f = bridge.getField(FIELD_NAME);
        if (!Modifier.isStatic(f.getModifiers()) || f.getType() != IntFunction.class) {
            throw new NoSuchFieldException(CLASS_NAME + "." + FIELD_NAME + " has an unexpected shape: " + f);
        }
        return f;
    }
}
