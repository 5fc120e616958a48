package io.kmem4j.agent.bridge;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import org.agrona.UnsafeApi;

/**
 * One static field of {@code java.nio.Kmem4jBridge}, read and written with volatile semantics
 * through {@code jdk.internal.misc.Unsafe} at the field's static base and offset. Not
 * {@link Field#get}/{@link Field#set}: on JDK 18 and later core reflection makes a method handle per
 * field and spins LambdaForms for it, some 4 ms of every start-up on JDK 25 for the two the agent
 * touches in {@code premain}.
 *
 * <p>The field's class is initialized first, as reflection does. Threads: any. The field's own type
 * is checked at {@link #set}, as {@link Field#set} would.
 */
public final class BridgeField {
    private final Field field;
    private final Object base;
    private final long offset;

    /**
     * @param field a static, non-final field of a reference type
     * @throws IllegalArgumentException for any other field
     */
    BridgeField(final Field field) {
        final int m = field.getModifiers();
        if (!Modifier.isStatic(m) || Modifier.isFinal(m) || field.getType().isPrimitive()) {
            throw new IllegalArgumentException("not a static, non-final reference field: " + field);
        }
        this.field = field;
        // as Field.get/set do: a static initializer that ran after a write through Unsafe would undo it
        // (the bridge's sets bufferPools)
        UnsafeApi.ensureClassInitialized(field.getDeclaringClass());
        this.base = UnsafeApi.staticFieldBase(field);
        this.offset = UnsafeApi.staticFieldOffset(field);
    }

    /** @return the field's value (a volatile read) */
    public Object get() {
        return UnsafeApi.getReferenceVolatile(base, offset);
    }

    /**
     * Sets the field (a volatile write).
     *
     * @param value null, or an instance of the field's type
     * @throws IllegalArgumentException when {@code value} is not an instance of the field's type
     */
    public void set(final Object value) {
        if (value != null && !field.getType().isInstance(value)) {
            throw new IllegalArgumentException("cannot set " + field + " to a " + value.getClass().getName());
        }
        UnsafeApi.putReferenceVolatile(base, offset, value);
    }

    /** @return the field itself, for its name and type */
    public Field field() {
        return field;
    }

    @Override
    public String toString() {
        return field.toString();
    }
}
