package io.kmem4j.agent.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.Version;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link NettyBuffers} and {@link NettyCopy} on the real netty-buffer (no agent: the hook is called directly). */
class NettyCopyTest {
    private static final int THREADS = 8;
    private static final int ROUNDS = 5;

    static {
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE); // Netty's own DEBUG lines stay out of the build log
    }

    private SlabAllocator allocator;

    @BeforeEach
    void setUp() {
        allocator = new SlabAllocator(SlabAllocatorConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        allocator.close();
    }

    /**
     * A gRPC client's and server's event loops ask for their first buffers at the same moment. The
     * ClassValue behind the copy lookup may then compute a copy on each thread and keep one; the copy
     * used to be logged and listed in the bean's {@code Copies} once per computation (two identical
     * lines in GrpcPresetIT). Now each copy of Netty is one line, however the threads race.
     */
    @Test
    void aCopyOfNettyMetByManyThreadsAtOnceIsListedOnce() throws Exception {
        final PooledByteBufAllocator netty = new PooledByteBufAllocator(true);
        final ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                final NettyBuffers buffers = new NettyBuffers(allocator, null);
                final CyclicBarrier start = new CyclicBarrier(THREADS);
                final List<Future<Object>> served = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    served.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return buffers.apply(netty, (long) Integer.MAX_VALUE << 32 | 256);
                    }));
                }
                for (final Future<Object> f : served) {
                    final ByteBuf b = (ByteBuf) f.get(30, TimeUnit.SECONDS);
                    assertThat(b.capacity()).isEqualTo(256);
                    assertThat(b.release()).isTrue();
                }
                assertThat(buffers.copies).as("round %s", round).hasSize(1);
                assertThat(buffers.copies.get(0)).startsWith("io.netty " + nettyBufferVersion() + " in ");
                assertThat(buffers.copiesLeftAlone.sum()).isZero();
                assertThat(buffers.failures()).isZero();
                assertThat(buffers.buffers()).isEqualTo(THREADS);
                assertThat(buffers.releases()).isEqualTo(THREADS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anUnrelocatedCopysVersionIsNettysOwn() {
        assertThat(NettyCopy.version("", PooledByteBufAllocator.class.getClassLoader(),
            PooledByteBufAllocator.class.getPackage())).isEqualTo(nettyBufferVersion());
    }

    /**
     * grpc-netty-shaded ships Netty's version file as {@code META-INF/io.grpc.netty.shaded.io.netty.versions.properties}
     * with {@code netty-common}'s keys only, and its manifest's {@code Implementation-Version} is gRPC's
     * (1.85.1), which the Copies line used to give as the Netty version.
     */
    @Test
    void aRelocatedCopysVersionComesFromItsRelocatedVersionFileNotTheJarsManifest(@TempDir final Path dir)
        throws IOException {
        final Path meta = Files.createDirectories(dir.resolve("META-INF"));
        Files.writeString(meta.resolve("io.grpc.netty.shaded.io.netty.versions.properties"),
            "netty-common.version=4.2.17.Final\nnetty-common.buildDate=2026-08-04\n");
        final Package manifestSaysOtherwise = PooledByteBufAllocator.class.getPackage();
        assertThat(manifestSaysOtherwise.getImplementationVersion()).isNotNull();
        try (URLClassLoader shaded = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            assertThat(NettyCopy.version("io.grpc.netty.shaded.", shaded, manifestSaysOtherwise))
                .isEqualTo("4.2.17.Final");
            assertThat(NettyCopy.version("com.acme.shaded.", shaded, manifestSaysOtherwise))
                .as("a relocation without its version file").isEqualTo("version unknown");
        }
    }

    private static String nettyBufferVersion() {
        return Version.identify().get("netty-buffer").artifactVersion();
    }
}
