package io.kmem4j.agent.pool;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.pool.TypePool;

/**
 * What a pool's methods are, read from their class files (no class is loaded): each
 * {@link PoolMember} must be a method with a body of one of these shapes (static or instance):
 * <ul>
 *   <li><b>allocation</b>: returns {@code ByteBuffer}, parameter 0 is the size ({@code int} or {@code long});</li>
 *   <li><b>resize</b>: returns {@code ByteBuffer}, parameter 0 the old {@code ByteBuffer}, parameter 1 the new size;</li>
 *   <li><b>release</b>: parameter 0 is the {@code ByteBuffer}, any return type; or a no-argument instance
 *       method of a class with exactly one {@code ByteBuffer} instance field, the buffer it releases
 *       (a handle, like Netty 4.2's {@code CleanableDirectBuffer});</li>
 * </ul>
 * A pool fits when every member has a shape, {@code +original} is only on releases, and it has at
 * least one allocation and one release. Threads: any (stateless).
 */
final class PoolShape {
    enum Role { ALLOCATE, RESIZE, RELEASE }

    /** A member with its shape: the parameter or field the advice reads. */
    static final class Fitted {
        final PoolMember member;
        final Role role;
        final MethodDescription.InDefinedShape method;
        /** The released buffer of a handle release; {@code null} otherwise. */
        final FieldDescription.InDefinedShape handleField;

        Fitted(final PoolMember member, final Role role, final MethodDescription.InDefinedShape method,
               final FieldDescription.InDefinedShape handleField) {
            this.member = member;
            this.role = role;
            this.method = method;
            this.handleField = handleField;
        }
    }

    /** The outcome: the fitted members, or why the pool does not fit. */
    static final class Result {
        final List<Fitted> members;
        final String problem;
        /** A class of the pool is not visible at all (another library version, or not on this loader). */
        final boolean classMissing;

        private Result(final List<Fitted> members, final String problem, final boolean classMissing) {
            this.members = members;
            this.problem = problem;
            this.classMissing = classMissing;
        }

        boolean fits() {
            return problem == null;
        }
    }

    private PoolShape() {
    }

    /** Checks every member of {@code pool} against the class files {@code types} resolves. */
    static Result check(final PoolSpec pool, final TypePool types) {
        final List<Fitted> fitted = new ArrayList<>();
        boolean allocates = false;
        boolean releases = false;
        for (final PoolMember m : pool.members) {
            final TypePool.Resolution r = types.describe(m.className);
            if (!r.isResolved()) {
                return new Result(List.of(), "class " + m.className + " not found", true);
            }
            final Fitted f = fit(m, r.resolve());
            if (f == null) {
                return new Result(List.of(), m + (declares(r.resolve(), m) ? " has none of the shapes" : " is not"
                    + " declared with a body in " + m.className + "; a pool method must have one of the shapes")
                    + " allocation (returns ByteBuffer, size int|long first), resize (returns ByteBuffer, takes"
                    + " ByteBuffer then size), release (takes ByteBuffer first, or a no-argument method of a class"
                    + " with one ByteBuffer field)", false);
            }
            if (m.thenOriginal && f.role != Role.RELEASE) {
                return new Result(List.of(), m + ": +original is for release methods only", false);
            }
            allocates |= f.role == Role.ALLOCATE;
            releases |= f.role == Role.RELEASE;
            fitted.add(f);
        }
        if (!allocates || !releases) {
            return new Result(List.of(), "a pool needs at least one allocation and one release method", false);
        }
        return new Result(fitted, null, false);
    }

    /** @return {@code m} fitted against its class {@code type}, or {@code null} when it has no shape. */
    static Fitted fit(final PoolMember m, final TypeDescription type) {
        for (final MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            if (!method.isMethod() || !method.getName().equals(m.methodName) || !sameParameters(method, m)
                || method.isAbstract() || method.isNative()) {
                continue;
            }
            final Role role = roleOf(method);
            if (role == null) {
                return handleRelease(m, type, method);
            }
            return new Fitted(m, role, method, null);
        }
        return null;
    }

    private static boolean declares(final TypeDescription type, final PoolMember m) {
        return type.getDeclaredMethods().stream().anyMatch(method -> method.isMethod() && !method.isAbstract()
            && !method.isNative() && method.getName().equals(m.methodName) && sameParameters(method, m));
    }

    private static Role roleOf(final MethodDescription method) {
        final List<TypeDescription> p = method.getParameters().asTypeList().asErasures();
        final boolean returnsBuffer = isBuffer(method.getReturnType().asErasure());
        if (returnsBuffer && p.size() >= 1 && isSize(p.get(0))) {
            return Role.ALLOCATE;
        }
        if (returnsBuffer && p.size() >= 2 && isBuffer(p.get(0)) && isSize(p.get(1))) {
            return Role.RESIZE;
        }
        if (p.size() >= 1 && isBuffer(p.get(0))) {
            return Role.RELEASE;
        }
        return null;
    }

    private static Fitted handleRelease(final PoolMember m, final TypeDescription type,
                                        final MethodDescription.InDefinedShape method) {
        if (method.isStatic() || !method.getParameters().isEmpty()) {
            return null;
        }
        FieldDescription.InDefinedShape buffer = null;
        for (final FieldDescription.InDefinedShape f : type.getDeclaredFields()) {
            if (!f.isStatic() && isBuffer(f.getType().asErasure())) {
                if (buffer != null) {
                    return null; // two buffers: which one is released is not clear
                }
                buffer = f;
            }
        }
        return buffer == null ? null : new Fitted(m, Role.RELEASE, method, buffer);
    }

    private static boolean sameParameters(final MethodDescription method, final PoolMember m) {
        final List<TypeDescription> p = method.getParameters().asTypeList().asErasures();
        if (p.size() != m.parameterTypes.size()) {
            return false;
        }
        for (int i = 0; i < p.size(); i++) {
            final String declared = m.parameterTypes.get(i);
            if (!p.get(i).getName().equals(declared) && !declared.equals(p.get(i).getCanonicalName())) {
                return false;
            }
        }
        return true;
    }

    private static boolean isBuffer(final TypeDescription t) {
        return t.getName().equals(ByteBuffer.class.getName());
    }

    private static boolean isSize(final TypeDescription t) {
        return t.represents(int.class) || t.represents(long.class);
    }
}
