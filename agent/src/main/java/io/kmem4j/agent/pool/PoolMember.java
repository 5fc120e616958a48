package io.kmem4j.agent.pool;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One method of a buffer pool named in the configuration: {@code com.acme.Pool#take(int)}, with an
 * optional {@code +original} suffix on a release method. What the method <em>is</em> (allocation,
 * resize or release) follows from its shape when its class is seen ({@link PoolShape}); here it is
 * only text: the declaring class's binary name ({@code $} for nested classes), the method name and
 * the parameter types as written in Java ({@code java.nio.ByteBuffer}, {@code int}, {@code long}).
 *
 * <p>Immutable; any thread.
 */
public final class PoolMember {
    private static final String JAVA_NAME = "[\\p{L}_$][\\p{L}\\p{N}_$]*";
    private static final Pattern SYNTAX = Pattern.compile(
        "(" + JAVA_NAME + "(?:\\." + JAVA_NAME + ")*)#(" + JAVA_NAME + ")\\(([^()]*)\\)(\\+original)?");

    public final String className;
    public final String methodName;
    public final List<String> parameterTypes;
    /** Run the method's own body after kmem4j took its buffer back (release methods only). */
    public final boolean thenOriginal;

    private PoolMember(final String className, final String methodName, final List<String> parameterTypes,
                       final boolean thenOriginal) {
        this.className = className;
        this.methodName = methodName;
        this.parameterTypes = parameterTypes;
        this.thenOriginal = thenOriginal;
    }

    /**
     * @param text {@code Class#method(type,type)} or {@code Class#method(type)+original}
     * @return the member
     * @throws IllegalArgumentException naming {@code text} when it does not have that form
     */
    static PoolMember parse(final String text) {
        final Matcher m = SYNTAX.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text.trim() + "' is not Class#method(parameter types)");
        }
        final String params = m.group(3).replace(" ", "");
        return new PoolMember(m.group(1), m.group(2), params.isEmpty() ? List.of() : List.of(params.split(",", -1)),
            m.group(4) != null);
    }

    /** @return the class name in the JVM's internal form, {@code com/acme/Pool}. */
    public String internalClassName() {
        return className.replace('.', '/');
    }

    @Override
    public String toString() {
        return className + "#" + methodName + "(" + String.join(",", parameterTypes) + ")"
            + (thenOriginal ? "+original" : "");
    }
}
