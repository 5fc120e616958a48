package io.kmem4j.agent.pool;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.kmem4j.agent.bridge.BootstrapBridge;
import io.kmem4j.agent.exclude.CallerExclusion;
import io.kmem4j.agent.log.AgentLog;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;
import org.slf4j.Logger;

/**
 * Rewrites application classes, in whatever class loader they live, when they load and (at install)
 * by retransformation of those already loaded:
 * <ul>
 *   <li>methods of the configured pools ({@link PoolSpec}) get the pool advice
 *       ({@link PoolAllocateAdvice}, {@link PoolResizeAdvice}, {@link PoolReleaseAdvice});</li>
 *   <li>classes of excluded packages ({@code excludeCallers}) get the {@link CallerExclusion} rewrite:
 *       their {@code allocateDirect} call sites go to the JDK's own body.</li>
 * </ul>
 * A pool is checked as a whole ({@link PoolShape}) from class files, the first time one of its classes
 * is seen in a class loader, before any of its methods is rewritten: it is rewritten in that loader
 * only when every member fits and no ancestor loader sees only part of its classes
 * ({@link #splitBetweenLoaders}), so kmem4j's buffers never reach a release method left as written.
 * For every other class a load costs one hash lookup and a prefix test per exclusion.
 *
 * <p>Threads: {@link #transform} runs on whichever thread loads or retransforms a class.
 */
public final class PoolTransformer implements ClassFileTransformer {
    /**
     * Class files of the bootstrap loader ({@code java.nio.ByteBuffer} for every exclusion), parsed
     * once and shared by every class loader's pool: without it each rewritten class re-reads them.
     */
    private static final TypePool BOOT_TYPES = TypePool.Default.of(ClassFileLocator.ForClassLoader.ofBootLoader());

    private final BootstrapBridge.Members bridge;
    /** Internal class name -> the pools with a member in that class. */
    private final Map<String, List<PoolSpec>> poolsByClass = new HashMap<>();
    /** Classes whose {@code allocateDirect} call sites go to the JDK ({@code excludeCallers}). */
    private final CallerExclusion exclusion;
    /** Per pool and class loader: does the pool fit there (decided once). Guarded by itself. */
    private final Map<PoolSpec, Map<ClassLoader, Boolean>> fits = new HashMap<>();
    public final LongAdder rewrittenMethods = new LongAdder();
    public final LongAdder excludedClasses = new LongAdder();
    public final LongAdder poolsLeftAlone = new LongAdder();
    public final LongAdder failures = new LongAdder();

    public PoolTransformer(final BootstrapBridge.Members bridge, final List<PoolSpec> pools, final List<String> excludeCallers) {
        this.bridge = bridge;
        for (final PoolSpec p : pools) {
            fits.put(p, new WeakHashMap<>());
            for (final PoolMember m : p.members) {
                final List<PoolSpec> list = poolsByClass.computeIfAbsent(m.internalClassName(), k -> new ArrayList<>());
                if (!list.contains(p)) {
                    list.add(p);
                }
            }
        }
        this.exclusion = new CallerExclusion(excludeCallers, bridge.allocateDirectJdk, BOOT_TYPES);
    }

    /**
     * Registers the transformer and retransforms the pools' and excluded classes already loaded
     * (each on its own: one class that cannot be retransformed does not stop the others).
     */
    public void install(final Instrumentation inst) {
        inst.addTransformer(this, true);
        retransformLoaded(inst, name -> poolsByClass.containsKey(name) || exclusion.excludes(name), failures);
    }

    /**
     * Retransforms the loaded classes whose internal name {@code rewrites} accepts, each on its own: one
     * class that cannot be retransformed (counted in {@code failures}, one WARN line) does not stop the others.
     */
    public static void retransformLoaded(final Instrumentation inst, final java.util.function.Predicate<String> rewrites,
                                         final LongAdder failures) {
        final List<Class<?>> loaded = new ArrayList<>();
        for (final Class<?> c : inst.getAllLoadedClasses()) {
            if (rewrites.test(c.getName().replace('.', '/')) && inst.isModifiableClass(c)) {
                loaded.add(c);
            }
        }
        for (final Class<?> c : loaded) {
            try {
                inst.retransformClasses(c);
            } catch (final Throwable t) {
                failures.increment();
                log().warn("cannot retransform {}: {}", c.getName(), t.toString());
            }
        }
    }

    @Override
    public byte[] transform(final Module module, final ClassLoader loader, final String className,
                            final Class<?> classBeingRedefined, final ProtectionDomain protectionDomain,
                            final byte[] classfileBuffer) {
        if (className == null || loader == PoolTransformer.class.getClassLoader()) {
            return null; // the agent's own classes are never rewritten
        }
        final List<PoolSpec> pools = poolsByClass.get(className);
        final boolean exclude = exclusion.excludes(className);
        if (pools == null && !exclude) {
            return null;
        }
        try {
            final String name = className.replace('/', '.');
            final TypePool types = new TypePool.Default(new TypePool.CacheProvider.Simple(),
                new ClassFileLocator.Compound(ClassFileLocator.Simple.of(name, classfileBuffer),
                    ClassFileLocator.ForClassLoader.of(loader)), TypePool.Default.ReaderMode.FAST, BOOT_TYPES);
            final TypeDescription type = types.describe(name).resolve();
            DynamicType.Builder<?> builder = new ByteBuddy()
                .with(Implementation.Context.Disabled.Factory.INSTANCE)
                .decorate(type, ClassFileLocator.Simple.of(name, classfileBuffer));
            int rewritten = 0;
            if (pools != null) {
                for (final PoolShape.Fitted f : membersOf(type, pools, loader, types)) {
                    builder = builder.visit(advice(f));
                    rewritten++;
                }
            }
            if (exclude) {
                builder = builder.visit(exclusion.rewrite());
            }
            if (rewritten == 0 && !exclude) {
                return null;
            }
            final byte[] bytes = builder.make().getBytes();
            rewrittenMethods.add(rewritten);
            if (exclude) {
                excludedClasses.increment();
            }
            return bytes;
        } catch (final Throwable t) {
            failures.increment(); // a transformer must not throw: the class stays as written
            try {
                log().warn("cannot rewrite {}; it stays as written: {}", className.replace('/', '.'), t.toString());
            } catch (final Throwable ignored) {
                // nothing more to do
            }
            return null;
        }
    }

    /** The members of the pools that fit in {@code loader} and live in {@code type}, one per method. */
    private List<PoolShape.Fitted> membersOf(final TypeDescription type, final List<PoolSpec> pools,
                                             final ClassLoader loader, final TypePool types) {
        final Map<String, PoolShape.Fitted> byMethod = new LinkedHashMap<>();
        for (final PoolSpec pool : pools) {
            if (!fits(pool, loader, types)) {
                continue;
            }
            for (final PoolMember m : pool.members) {
                if (m.className.equals(type.getName())) {
                    final PoolShape.Fitted f = PoolShape.fit(m, type);
                    if (f != null) {
                        byMethod.putIfAbsent(f.method.getInternalName() + f.method.getDescriptor(), f);
                    }
                }
            }
        }
        return new ArrayList<>(byMethod.values());
    }

    private boolean fits(final PoolSpec pool, final ClassLoader loader, final TypePool types) {
        final Map<ClassLoader, Boolean> decided = fits.get(pool);
        synchronized (decided) {
            final Boolean known = decided.get(loader);
            if (known != null) {
                return known;
            }
            final PoolShape.Result r = PoolShape.check(pool, types);
            final String problem = r.fits() ? splitBetweenLoaders(pool, loader) : r.problem;
            final boolean fit = problem == null;
            decided.put(loader, fit);
            if (fit) {
                log().debug("pool {} is served by kmem4j in class loader {}", pool, loader);
            } else {
                poolsLeftAlone.increment();
                if (pool.quiet) {
                    log().debug("pool {} does not fit in class loader {} and is left alone: {}", pool, loader, problem);
                } else {
                    log().warn("pool {} is left alone (class loader {}): {}", pool, loader, problem);
                }
            }
            return fit;
        }
    }

    /**
     * A pool whose classes {@code loader} sees all but one of its ancestors sees only some of: the
     * ancestor defines those (parent first), finds the pool incomplete and leaves them as written, so
     * rewriting the others in {@code loader} would hand kmem4j's buffers to a release method never
     * rewritten (its {@code Unsafe.freeMemory} on slab memory aborts the JVM). An ancestor that sees
     * all of them or none is fine (it rewrites the pool itself, or {@code loader} defines every class).
     * Only the parent chain is examined: a loader delegating elsewhere (OSGi) is not detected.
     *
     * @return why the pool is split, or {@code null}
     */
    static String splitBetweenLoaders(final PoolSpec pool, final ClassLoader loader) {
        final Set<String> classes = new LinkedHashSet<>();
        for (final PoolMember m : pool.members) {
            classes.add(m.className);
        }
        for (ClassLoader p = loader == null ? null : loader.getParent(); p != null; p = p.getParent()) {
            final List<String> seen = new ArrayList<>();
            final List<String> unseen = new ArrayList<>();
            for (final String c : classes) {
                (p.getResource(c.replace('.', '/') + ".class") != null ? seen : unseen).add(c);
            }
            if (!seen.isEmpty() && !unseen.isEmpty()) {
                return "its classes are split between class loaders: " + seen + " resolve through the parent loader "
                    + p + " (which sees no " + unseen + " and leaves the pool as written), " + unseen
                    + " only through " + loader + "; the classes of one pool must all be loaded by one class loader";
            }
        }
        return null;
    }

    private AsmVisitorWrapper advice(final PoolShape.Fitted f) {
        Advice.WithCustomMapping mapping = Advice.withCustomMapping()
            .bind(PoolHooks.Explicit.class, bridge.explicit.field())
            .bind(PoolHooks.Resize.class, bridge.resize.field())
            .bind(PoolHooks.Resized.class, bridge.resized.field())
            .bind(PoolHooks.Release.class, f.member.thenOriginal ? bridge.releaseThenOriginal.field() : bridge.release.field());
        final Class<?> adviceClass;
        switch (f.role) {
            case ALLOCATE:
                mapping = mapping.bind(PoolHooks.Size.class, f.method.getParameters().get(0));
                adviceClass = PoolAllocateAdvice.class;
                break;
            case RESIZE:
                mapping = mapping.bind(PoolHooks.Buffer.class, f.method.getParameters().get(0))
                    .bind(PoolHooks.Size.class, f.method.getParameters().get(1));
                adviceClass = PoolResizeAdvice.class;
                break;
            default:
                mapping = f.handleField != null ? mapping.bind(PoolHooks.Buffer.class, f.handleField)
                    : mapping.bind(PoolHooks.Buffer.class, f.method.getParameters().get(0));
                adviceClass = PoolReleaseAdvice.class;
        }
        return mapping.to(adviceClass).on(ElementMatchers.named(f.method.getName())
            .and(ElementMatchers.hasDescriptor(f.method.getDescriptor())));
    }

    private static Logger log() {
        return AgentLog.get(PoolTransformer.class);
    }
}
