package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/**
 * A web application's own copy of Netty in a child-first class loader, beside the parent's: each copy
 * gets classes of its own. The child used to find the parent copy's {@code Kmem4jDirectByteBuf}
 * through delegation, reuse it, fail to build it over its own {@code ByteBufAllocator}, and be left
 * alone (found by review).
 */
class NettyChildFirstTest {

    /** Loads {@code io.netty.*} from its own jars first, as Tomcat's web-application loader does. */
    static class ChildFirst extends URLClassLoader {
        ChildFirst(final URL[] urls) {
            super(urls, NettyChildFirstTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (!name.startsWith("io.netty.")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) {
                            return super.loadClass(name, resolve); // not in its jars: the parent's
                        }
                        final byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (final java.io.IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }

    /** The buffer under Netty's leak-detection wrapper, which its sampling puts around some buffers. */
    private static Object unwrapped(final Object buf) throws Throwable {
        Object b = buf;
        while (b.getClass().getSimpleName().contains("LeakAware")) {
            // through the public ByteBuf of the buffer's own copy of Netty: the wrappers are package-private
            final Class<?> byteBuf = Class.forName("io.netty.buffer.ByteBuf", false, b.getClass().getClassLoader());
            b = java.lang.invoke.MethodHandles.publicLookup()
                .findVirtual(byteBuf, "unwrap", java.lang.invoke.MethodType.methodType(byteBuf)).invoke(b);
        }
        return b;
    }

    @Test
    void aChildFirstCopyBesideTheParentsIsServedWithClassesOfItsOwn() throws Throwable {
        final SlabAllocator allocator = new SlabAllocator(NettyBuffers.configFor(SlabAllocatorConfig.defaults()));
        final NettyBuffers hook = new NettyBuffers(allocator, null);
        final long capacities = (long) Integer.MAX_VALUE << 32 | 256;
        try {
            final ByteBuf parent = (ByteBuf) hook.apply(new PooledByteBufAllocator(true), capacities);
            assertThat(unwrapped(parent).getClass().getSimpleName()).isEqualTo(NettyClasses.BYTE_BUF);
            parent.release();
            final URL[] jars = {
                PooledByteBufAllocator.class.getProtectionDomain().getCodeSource().getLocation(),
                io.netty.util.internal.PlatformDependent.class.getProtectionDomain().getCodeSource().getLocation(),
            };
            try (ChildFirst loader = new ChildFirst(jars)) {
                final Class<?> pooled = loader.loadClass("io.netty.buffer.PooledByteBufAllocator");
                assertThat(pooled).as("the child's own copy").isNotSameAs(PooledByteBufAllocator.class);
                final Object child = hook.apply(pooled.getConstructor(boolean.class).newInstance(true), capacities);
                assertThat(child).as("the child's copy is served, %s", hook.copies).isNotNull();
                assertThat(unwrapped(child).getClass().getSimpleName()).isEqualTo(NettyClasses.BYTE_BUF);
                assertThat(unwrapped(child).getClass().getClassLoader()).isSameAs(loader);
                final Class<?> childByteBuf = loader.loadClass("io.netty.buffer.ByteBuf");
                assertThat((boolean) java.lang.invoke.MethodHandles.publicLookup()
                    .findVirtual(childByteBuf, "release", java.lang.invoke.MethodType.methodType(boolean.class))
                    .invoke(child)).isTrue();
            }
            assertThat(hook.copiesLeftAlone.sum()).as("copies %s", hook.copies).isZero();
            assertThat(hook.copies).hasSize(2);
            // the parent's buffer is kept for reuse; the child's, of another allocator, went back at once
            assertThat(hook.giveBackKept()).isEqualTo(1);
            assertThat(allocator.stats().liveBuffers()).isZero();
        } finally {
            allocator.close();
        }
    }
}
