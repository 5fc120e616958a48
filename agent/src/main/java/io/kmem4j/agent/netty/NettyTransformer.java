package io.kmem4j.agent.netty;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

import io.kmem4j.agent.bridge.BridgeField;
import io.kmem4j.agent.log.AgentLog;
import io.kmem4j.agent.pool.PoolTransformer;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * {@code presets=netty-allocator}: rewrites {@code newDirectBuffer(int, int)} of Netty's
 * {@code PooledByteBufAllocator} and {@code AdaptiveByteBufAllocator} (4.1 and 4.2, and relocated copies
 * such as gRPC's {@code io.grpc.netty.shaded.io.netty.buffer}) with {@link NettyAllocateAdvice}, when
 * they load and, at install, by retransformation of those already loaded. The advice changes no
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

    private final BridgeField hook;
    public final LongAdder rewrittenMethods = new LongAdder();
    public final LongAdder failures = new LongAdder();

    public NettyTransformer(final BridgeField hook) {
        this.hook = hook;
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
            final String name = className.replace('/', '.');
            final TypePool types = new TypePool.Default(new TypePool.CacheProvider.Simple(),
                new ClassFileLocator.Compound(ClassFileLocator.Simple.of(name, classfileBuffer),
                    ClassFileLocator.ForClassLoader.of(loader)), TypePool.Default.ReaderMode.FAST);
            final TypeDescription type = types.describe(name).resolve();
            final String byteBuf = className.substring(0, className.lastIndexOf('/') + 1) + "ByteBuf";
            final String descriptor = "(II)L" + byteBuf + ";";
            if (type.getDeclaredMethods().filter(ElementMatchers.named("newDirectBuffer")
                .and(ElementMatchers.hasDescriptor(descriptor))).isEmpty()) {
                AgentLog.get(NettyTransformer.class).debug("{} has no newDirectBuffer{}; left as written", name,
                    descriptor);
                return null;
            }
            final byte[] bytes = new ByteBuddy()
                .with(Implementation.Context.Disabled.Factory.INSTANCE)
                .decorate(type, ClassFileLocator.Simple.of(name, classfileBuffer))
                .visit(Advice.withCustomMapping().bind(NettyHook.class, hook.field()).to(NettyAllocateAdvice.class)
                    .on(ElementMatchers.named("newDirectBuffer").and(ElementMatchers.hasDescriptor(descriptor))))
                .make().getBytes();
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
}
