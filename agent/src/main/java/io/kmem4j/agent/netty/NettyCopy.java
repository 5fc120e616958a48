package io.kmem4j.agent.netty;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.IntFunction;
import java.util.function.Predicate;


/**
 * One copy of Netty's buffer package in one class loader ({@code io.netty.buffer}, or a relocated one
 * such as gRPC's {@code io.grpc.netty.shaded.io.netty.buffer}), with the classes kmem4j defines into it
 * the first time one of its allocators asks for a direct buffer:
 * {@code Kmem4jDirectByteBuf}, a subclass of Netty's own unpooled direct buffer whose
 * {@code freeDirect}, {@code allocateDirect} (4.1 growth) and {@code allocateDirectBuffer} (4.2 growth)
 * give blocks back and take new ones, 4.2's {@code Kmem4jCleanableBuffer} for a block served on growth,
 * and {@code Kmem4jByteBufFactory} ({@link NettyClasses} shows all three).
 * Netty's own {@code deallocate()} (reference count 0) and {@code capacity(int)} run unchanged and
 * reach kmem4j through those hooks, so a buffer goes back exactly once, when Netty would free it.
 * The subclass's hooks read static fields set right after it is defined; they reference only
 * {@code java.base} and Netty's own types, so nothing of kmem4j is visible to Netty's loader.
 *
 * <p>A copy whose classes lack any of these members (another Netty line) is left alone: its
 * allocators keep their own bodies. Immutable once built (but for the flag that it was announced,
 * {@link #firstAnnouncement}); any thread.
 */
final class NettyCopy {
    static final String GROW_FIELD = "kmem4jGrow";
    static final String GROW_CLEANABLE_FIELD = "kmem4jGrowCleanable";
    static final String RELEASE_FIELD = "kmem4jRelease";
    static final String BUFFER_FIELD = "kmem4jBuffer";
    static final String RECYCLE_FIELD = "kmem4jRecycle";
    static final String BLOCK_FIELD = "kmem4jBlock";
    /** The class every Netty allocator extends, by which a (relocated) copy is recognised. */
    static final String ABSTRACT_ALLOCATOR = "io.netty.buffer.AbstractByteBufAllocator";

    /** {@code ""} or a relocation such as {@code "io.grpc.netty.shaded."}. */
    final String prefix;
    /** For the bean and the log: prefix, loader, version, and the base class or why it is left alone. */
    final String description;
    /** {@code (Object allocator, ByteBuffer block, int maxCapacity) -> Object}: the leak-aware ByteBuf; null when left alone. */
    private final MethodHandle factory;
    /**
     * The same for {@code maxCapacity == Integer.MAX_VALUE} (Netty's default: {@code directBuffer(n)},
     * {@code ioBuffer(n)}), as a generated class whose {@code apply} C2 inlines with its {@code new},
     * which the handle's call does not allow.
     */
    private final BiFunction<Object, Object, Object> unbounded;
    /** For the log: why a copy of Netty is left alone; null when served, or for a class of no Netty. */
    final String warning;
    private final AtomicBoolean announced = new AtomicBoolean();
    /** Its buffers are kept for reuse when released ({@link ReleasedBuffers}): blocks of whole size classes. */
    private final boolean reuses;

    private NettyCopy(final String prefix, final String description, final MethodHandle factory,
                      final BiFunction<Object, Object, Object> unbounded, final String warning, final boolean reuses) {
        this.reuses = reuses;
        this.prefix = prefix;
        this.description = description;
        this.factory = factory;
        this.unbounded = unbounded;
        this.warning = warning;
    }

    static NettyCopy leftAlone(final String prefix, final String description, final String warning) {
        return new NettyCopy(prefix, description, null, null, warning, false);
    }

    /** @return true when this copy's buffers are kept for reuse: give them blocks of their whole size class */
    boolean reuses() {
        return reuses;
    }

    /** @return true the first time only: this copy is to be logged and listed in the bean (once). */
    boolean firstAnnouncement() {
        return announced.compareAndSet(false, true);
    }

    boolean served() {
        return factory != null;
    }

    /** @return Netty's {@code ByteBuf} over {@code block}, through Netty's own leak detection */
    Object create(final Object allocator, final ByteBuffer block, final int maxCapacity) throws Throwable {
        return maxCapacity == Integer.MAX_VALUE ? unbounded.apply(allocator, block)
            : (Object) factory.invokeExact(allocator, block, maxCapacity);
    }

    /**
     * @param abstractAllocator the copy's {@code AbstractByteBufAllocator}
     * @param prefix its relocation prefix
     * @throws ReflectiveOperationException when a member this needs is missing (the copy is then left alone)
     */
    static NettyCopy define(final Class<?> abstractAllocator, final String prefix, final NettyBuffers hooks,
                            final Instrumentation inst) throws ReflectiveOperationException {
        final ClassLoader loader = abstractAllocator.getClassLoader();
        final String buffer = prefix + "io.netty.buffer.";
        final Class<?> platform = Class.forName(prefix + "io.netty.util.internal.PlatformDependent", true, loader);
        final boolean unsafe = (Boolean) platform.getMethod("hasUnsafe").invoke(null);
        final Class<?> base = Class.forName(buffer + (unsafe ? "UnpooledUnsafeDirectByteBuf" : "UnpooledDirectByteBuf"),
            false, loader);
        final Class<?> allocatorType = Class.forName(buffer + "ByteBufAllocator", false, loader);
        final Class<?> byteBuf = Class.forName(buffer + "ByteBuf", false, loader);
        // the super constructor the generated one calls (NettyClasses.byteBuf); NoSuchMethodException: left alone
        if (unsafe) {
            base.getDeclaredConstructor(allocatorType, ByteBuffer.class, int.class, boolean.class);
        } else {
            base.getDeclaredConstructor(allocatorType, ByteBuffer.class, int.class, boolean.class, boolean.class);
        }
        final Class<?> cleanableType = optionalClass(prefix + "io.netty.util.internal.CleanableDirectBuffer", loader);
        requireHook(base, "allocateDirect", ByteBuffer.class, int.class);
        requireHook(base, "freeDirect", void.class, ByteBuffer.class);
        if (cleanableType != null) {
            requireHook(base, "allocateDirectBuffer", cleanableType, int.class);
        }
        final String noReuse = missingForReuse(base);
        openToKmem4j(base, inst);
        final MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(base, MethodHandles.lookup());

        final String pkg = buffer.replace('.', '/');
        final Class<?> cleanable = cleanableType == null ? null
            : define(lookup, loader, buffer + NettyClasses.CLEANABLE, () -> NettyClasses.cleanable(pkg, cleanableType));
        final java.lang.reflect.Method leakAwareMethod = abstractAllocator.getDeclaredMethod("toLeakAwareBuffer", byteBuf);
        final Class<?> buf = define(lookup, loader, buffer + NettyClasses.BYTE_BUF,
            () -> NettyClasses.byteBuf(pkg, base, unsafe, allocatorType, cleanableType,
                noReuse == null ? leakAwareMethod : null));
        // a class defined earlier (a second agent) may have been made without the reuse members
        final boolean reuses = noReuse == null && java.util.function.Supplier.class.isAssignableFrom(buf);
        final MethodHandle leakAware = lookup.unreflect(leakAwareMethod);
        @SuppressWarnings("unchecked")
        final BiFunction<Object, Object, Object> unbounded = (BiFunction<Object, Object, Object>) define(lookup, loader,
            buffer + NettyClasses.FACTORY, () -> NettyClasses.factory(pkg, allocatorType, leakAwareMethod))
            .getConstructor().newInstance();
        final MethodHandle construct = lookup.findConstructor(buf,
            MethodType.methodType(void.class, allocatorType, ByteBuffer.class, int.class));
        final MethodHandle factory = MethodHandles.filterReturnValue(
                construct.asType(MethodType.methodType(byteBuf, allocatorType, ByteBuffer.class, int.class)), leakAware)
            .asType(MethodType.methodType(Object.class, Object.class, ByteBuffer.class, int.class));

        setStatic(buf, GROW_FIELD, (IntFunction<ByteBuffer>) hooks::grow);
        setStatic(buf, RELEASE_FIELD, (Predicate<ByteBuffer>) hooks::release);
        if (reuses) {
            setStatic(buf, RECYCLE_FIELD, (BiPredicate<Object, Object>) hooks::recycle);
        }
        if (cleanable != null) {
            setStatic(cleanable, RELEASE_FIELD, (Predicate<ByteBuffer>) hooks::release);
            final MethodHandle wrap = lookup.findConstructor(cleanable, MethodType.methodType(void.class, ByteBuffer.class))
                .asType(MethodType.methodType(Object.class, ByteBuffer.class));
            setStatic(buf, GROW_CLEANABLE_FIELD, hooks.growCleanable(wrap));
        }
        final String version = version(prefix, loader, base.getPackage(), codeSource(base));
        return new NettyCopy(prefix, prefix + "io.netty " + version + " in "
            + loader + ", buffers " + buf.getSimpleName() + " extends " + base.getSimpleName()
            + (reuses ? ", released buffers reused per thread" : ", no reuse (" + noReuse + ")"),
            factory, unbounded, null, reuses);
    }

    /** Members of {@link #missingForReuse} that the generated class overrides. */
    private static final java.util.Set<String> OVERRIDDEN = java.util.Set.of("deallocate", "capacity", "maxFastWritableBytes");

    /**
     * @return null when Netty's classes have every member {@code Kmem4jDirectByteBuf}'s reuse methods use
     *         (NettyClasses), else what is missing; such a copy is still served, without reuse (and
     *         without in-block growth, which needs {@code maxFastWritableBytes}, Netty 4.1.40 and later)
     */
    static String missingForReuse(final Class<?> base) {
        final String[][] members = {
            // name, parameter types; fields as "field:name"
            {"field:buffer"},
            {"setByteBuffer", "java.nio.ByteBuffer", "boolean"},
            {"maxCapacity", "int"},
            {"resetRefCnt"},
            {"setIndex0", "int", "int"},
            {"discardMarks"},
            {"deallocate"},
            {"checkNewCapacity", "int"},
            {"trimIndicesToCapacity", "int"},
            {"capacity", "int"},
            {"maxFastWritableBytes"},
        };
        for (final String[] m : members) {
            if (!hasMember(base, m)) {
                return base.getSimpleName() + " has no " + String.join(" ", m);
            }
        }
        // retained views with a count of their own (NettyClasses): the factories PooledByteBuf uses
        final String pkg = base.getPackageName() + ".";
        for (final String derived : new String[] {"PooledSlicedByteBuf", "PooledDuplicatedByteBuf"}) {
            try {
                final Class<?> c = Class.forName(pkg + derived, false, base.getClassLoader());
                final java.lang.reflect.Method m = c.getDeclaredMethod("newInstance",
                    Class.forName(pkg + "AbstractByteBuf", false, base.getClassLoader()),
                    Class.forName(pkg + "ByteBuf", false, base.getClassLoader()), int.class, int.class);
                if (!Modifier.isStatic(m.getModifiers()) || Modifier.isPrivate(m.getModifiers())) {
                    return derived + ".newInstance is not a static factory";
                }
            } catch (final ClassNotFoundException | NoSuchMethodException e) {
                return "no " + derived + ".newInstance(AbstractByteBuf, ByteBuf, int, int)";
            }
        }
        return null;
    }

    /** A non-private, non-static member of {@code base} or a superclass in its package (accessible from it). */
    private static boolean hasMember(final Class<?> base, final String[] m) {
        for (Class<?> c = base; c != null && c.getPackageName().equals(base.getPackageName()); c = c.getSuperclass()) {
            try {
                final java.lang.reflect.Member found;
                if (m[0].startsWith("field:")) {
                    final Field f = c.getDeclaredField(m[0].substring("field:".length()));
                    if (f.getType() != ByteBuffer.class) {
                        return false;
                    }
                    found = f;
                } else {
                    final Class<?>[] parameters = new Class<?>[m.length - 1];
                    for (int i = 1; i < m.length; i++) {
                        parameters[i - 1] = switch (m[i]) {
                            case "int" -> int.class;
                            case "boolean" -> boolean.class;
                            default -> ByteBuffer.class;
                        };
                    }
                    found = c.getDeclaredMethod(m[0], parameters);
                }
                final int mod = found.getModifiers();
                return !Modifier.isPrivate(mod) && !Modifier.isStatic(mod)
                    && !(OVERRIDDEN.contains(m[0]) && Modifier.isFinal(mod));

            } catch (final NoSuchFieldException | NoSuchMethodException notHere) {
                // look in the superclass
            }
        }
        return false;
    }

    /**
     * The copy's Netty version, from the file Netty's own {@code Version} reads,
     * {@code META-INF/io.netty.versions.properties}, under the relocated name a relocation gives it
     * ({@code META-INF/io.grpc.netty.shaded.io.netty.versions.properties} in grpc-netty-shaded, which
     * keeps only {@code netty-common}'s keys): {@code netty-buffer.version}, else
     * {@code netty-common.version}. The package's {@code Implementation-Version} only for an
     * unrelocated copy: a relocated copy's manifest is the relocating jar's (gRPC's version).
     */
    static String version(final String prefix, final ClassLoader loader, final Package nettyPackage) {
        return version(prefix, loader, nettyPackage, null);
    }

    /**
     * As {@link #version(String, ClassLoader, Package)}, reading first the file in the jar at
     * {@code codeSource} (the copy's own: a loader also lists its parents' files, first, and those can
     * be another copy's).
     */
    static String version(final String prefix, final ClassLoader loader, final Package nettyPackage,
                          final String codeSource) {
        String common = null;
        try {
            final java.util.List<URL> files = loader == null ? java.util.List.of()
                : new java.util.ArrayList<>(java.util.Collections.list(
                    loader.getResources("META-INF/" + prefix + "io.netty.versions.properties")));
            if (codeSource != null) {
                files.sort(java.util.Comparator.comparing(u -> u.toString().contains(codeSource) ? 0 : 1));
            }
            for (final URL file : files) {
                final Properties p = new Properties();
                try (InputStream in = file.openStream()) {
                    p.load(in);
                }
                final String buffer = p.getProperty("netty-buffer.version");
                if (buffer != null) {
                    return buffer;
                }
                if (common == null) {
                    common = p.getProperty("netty-common.version");
                }
            }
        } catch (final IOException | RuntimeException unreadable) {
            // the version is for the bean and the log only
        }
        if (common != null) {
            return common;
        }
        return !prefix.isEmpty() || nettyPackage == null || nettyPackage.getImplementationVersion() == null
            ? "version unknown" : nettyPackage.getImplementationVersion();
    }

    /** @return where {@code c} was loaded from ({@code file:/.../netty-buffer-4.2.18.Final.jar}), or null */
    private static String codeSource(final Class<?> c) {
        try {
            final java.security.CodeSource cs = c.getProtectionDomain().getCodeSource();
            return cs == null || cs.getLocation() == null ? null : cs.getLocation().toString();
        } catch (final RuntimeException unknown) {
            return null;
        }
    }

    /**
     * Defines a class of {@link NettyClasses} in Netty's package; one of that name this loader defined
     * already (a racing thread, or a second agent) is reused.
     */
    private static Class<?> define(final MethodHandles.Lookup lookup, final ClassLoader loader, final String name,
                                   final java.util.function.Supplier<byte[]> classFile) throws IllegalAccessException {
        // defined first, looked up only after a failure: a lookup through a child-first loader (a web
        // application's) would find a parent copy's class by delegation and make that loader its
        // initiating loader, and the definition of its own class of that name would then fail
        try {
            return lookup.defineClass(classFile.get());
        } catch (final LinkageError e) {
            final Class<?> raced = definedBy(name, loader); // a duplicate: a racing thread, or a second agent
            if (raced != null) {
                return raced;
            }
            throw e;
        }
    }

    /** @return the class of that name defined by {@code loader} itself, or {@code null} (another loader's, or none) */
    private static Class<?> definedBy(final String name, final ClassLoader loader) {
        try {
            final Class<?> c = Class.forName(name, false, loader);
            return c.getClassLoader() == loader ? c : null;
        } catch (final ClassNotFoundException expected) {
            return null;
        }
    }

    private static Class<?> optionalClass(final String name, final ClassLoader loader) {
        try {
            return Class.forName(name, false, loader); // Netty's own: from whichever loader resolves it for this copy
        } catch (final ClassNotFoundException expected) {
            return null;
        }
    }

    /** @throws NoSuchMethodException unless {@code base} has the protected (overridable) hook */
    private static void requireHook(final Class<?> base, final String name, final Class<?> returns,
                                    final Class<?>... parameters) throws NoSuchMethodException {
        for (Class<?> c = base; c != null; c = c.getSuperclass()) {
            try {
                final java.lang.reflect.Method m = c.getDeclaredMethod(name, parameters);
                final int mod = m.getModifiers();
                if (m.getReturnType() == returns && !Modifier.isFinal(mod) && !Modifier.isStatic(mod)
                    && (Modifier.isProtected(mod) || Modifier.isPublic(mod))) {
                    return;
                }
                break;
            } catch (final NoSuchMethodException notHere) {
                // look in the superclass
            }
        }
        throw new NoSuchMethodException(base.getName() + " has no overridable " + name + " returning "
            + returns.getName());
    }

    private static void setStatic(final Class<?> c, final String field, final Object value)
        throws ReflectiveOperationException {
        final Field f = c.getField(field);
        f.set(null, value);
    }

    /**
     * Netty 4.2 on the module path: {@code io.netty.buffer} is exported but not open; kmem4j opens it
     * to itself to define its classes there, as it opens {@code java.nio}.
     */
    private static void openToKmem4j(final Class<?> base, final Instrumentation inst) {
        final Module netty = base.getModule();
        final Module me = NettyCopy.class.getModule();
        final String pkg = base.getPackageName();
        if (netty.isNamed() && !netty.isOpen(pkg, me)) {
            inst.redefineModule(netty, Set.of(), Map.of(), Map.of(pkg, Set.of(me)), Set.of(), Map.of());
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
