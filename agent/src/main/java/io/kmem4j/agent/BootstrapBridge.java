package io.kmem4j.agent;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.function.IntFunction;

import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.modifier.FieldManifestation;
import net.bytebuddy.description.modifier.Ownership;
import net.bytebuddy.description.modifier.TypeManifestation;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.dynamic.scaffold.subclass.ConstructorStrategy;

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
     * @return the bridge's {@code allocator} field, defining the class on first use
     * @throws ReflectiveOperationException when {@code java.nio} is not open to the agent
     */
    static Field allocatorField() throws ReflectiveOperationException {
        Class<?> bridge;
        try {
            bridge = Class.forName(CLASS_NAME, false, null);
        } catch (final ClassNotFoundException notYet) {
            final byte[] bytes = new ByteBuddy()
                .subclass(Object.class, ConstructorStrategy.Default.NO_CONSTRUCTORS)
                .name(CLASS_NAME)
                .modifiers(Visibility.PUBLIC, TypeManifestation.FINAL)
                .defineField(FIELD_NAME, IntFunction.class, Visibility.PUBLIC, Ownership.STATIC, FieldManifestation.VOLATILE)
                .make()
                .getBytes();
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
