package io.kmem4j.agent.pool;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.kmem4j.agent.bridge.BootstrapBridge;
import io.kmem4j.core.AllocatorStats;
import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link PoolTransformer} and {@link PoolRouter} together, in this JVM: the fixture classes in
 * {@code io.kmem4j.agent.fixtures} are rewritten as a class loader defines them (as at class load
 * under the agent) and called; the bridge ({@code java.nio.Kmem4jBridge}) is defined for real and
 * points at a real {@link SlabAllocator}.
 */
class PoolTransformerTest {
    private static final String FIX = "io.kmem4j.agent.fixtures.";
    private static final String ACME = FIX + "AcmePool";
    private static final String UNSAFE_STYLE = FIX + "UnsafeStylePool";

    private SlabAllocator allocator;
    private BootstrapBridge.Members bridge;
    private PoolRouter router;

    @BeforeEach
    void setUp() throws Exception {
        allocator = new SlabAllocator(SlabAllocatorConfig.defaults());
        bridge = BootstrapBridge.members();
        router = new PoolRouter(allocator);
        router.connect(bridge);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (final io.kmem4j.agent.bridge.BridgeField f : List.of(bridge.explicit, bridge.release, bridge.releaseThenOriginal,
            bridge.resize, bridge.resized)) {
            f.set(null);
        }
        allocator.close();
    }

    /** Defines the fixtures itself (child-first), each through {@code transformer}. */
    static final class RewritingLoader extends ClassLoader {
        private final PoolTransformer transformer;

        RewritingLoader(final PoolTransformer transformer) {
            super("rewriting", PoolTransformerTest.class.getClassLoader());
            this.transformer = transformer;
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(FIX)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    final byte[] original = bytes(name);
                    final byte[] rewritten = transformer.transform(null, this, name.replace('.', '/'), null, null,
                        original);
                    final byte[] b = rewritten != null ? rewritten : original;
                    c = defineClass(name, b, 0, b.length);
                }
                return c;
            }
        }

        static byte[] bytes(final String name) {
            try (InputStream in = PoolTransformerTest.class.getClassLoader()
                .getResourceAsStream(name.replace('.', '/') + ".class")) {
                return in.readAllBytes();
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private RewritingLoader loader(final String pools, final String... excludes) {
        return new RewritingLoader(new PoolTransformer(bridge, PoolSpec.parsePools(pools), List.of(excludes)));
    }

    private static Object call(final Object target, final String method, final Object... args) throws Throwable {
        final Class<?> type = target instanceof Class ? (Class<?>) target : target.getClass();
        for (final Method m : type.getMethods()) {
            if (m.getName().equals(method) && m.getParameterCount() == args.length) {
                try {
                    return m.invoke(target instanceof Class ? null : target, args);
                } catch (final InvocationTargetException e) {
                    throw e.getCause();
                }
            }
        }
        throw new NoSuchMethodException(method);
    }

    private static int counter(final Object pool, final String field) throws Exception {
        return ((AtomicInteger) pool.getClass().getField(field).get(pool)).get();
    }

    private static long staticCounter(final Class<?> type, final String field) throws Exception {
        return ((AtomicLong) type.getField(field).get(null)).get();
    }

    // ---------------------------------------------------------------- a user's instance pool

    @Test
    void userPoolAllocationsComeFromTheExplicitFlavourAndReleasesComeBack() throws Throwable {
        final Object pool = loader(ACME + "#take(int)/" + ACME + "#give(java.nio.ByteBuffer)").loadClass(ACME)
            .getConstructor().newInstance();

        final ByteBuffer b = (ByteBuffer) call(pool, "take", 100);
        assertThat(allocator.isExplicit(b)).as("served by kmem4j's explicit flavour").isTrue();
        assertThat(b.capacity()).isEqualTo(100);
        assertThat(counter(pool, "taken")).as("the pool's own take() body was skipped").isZero();

        call(pool, "give", b);
        final AllocatorStats s = allocator.stats();
        assertThat(s.explicitFrees()).isEqualTo(1);
        assertThat(s.liveBuffers()).isZero();
        assertThat(counter(pool, "given")).as("the pool's own give() body was skipped").isZero();

        call(pool, "give", b);
        assertThat(allocator.stats().doubleFrees()).as("a second release is counted and ignored").isEqualTo(1);
        assertThat(counter(pool, "given")).as("the second release never reaches the pool").isZero();
        assertThat(router.allocations.sum()).isEqualTo(1);
        assertThat(router.releases.sum()).isEqualTo(1);
    }

    @Test
    void foreignBuffersGoToThePoolsOwnCodeUnchanged() throws Throwable {
        final Object pool = loader(ACME + "#take(int)/" + ACME + "#give(java.nio.ByteBuffer)").loadClass(ACME)
            .getConstructor().newInstance();

        final ByteBuffer large = (ByteBuffer) call(pool, "take", 1 << 20);
        assertThat(allocator.ownsMemoryOf(large)).as("1 MiB is outside the window").isFalse();
        assertThat(counter(pool, "taken")).as("the pool's own take() ran").isEqualTo(1);

        call(pool, "give", large);
        call(pool, "give", ByteBuffer.allocate(64));
        call(pool, "give", ByteBuffer.allocateDirect(64));
        call(pool, "give", (ByteBuffer) null);
        assertThat(counter(pool, "given")).as("heap, JDK direct, null and the pool's own buffer reach give()")
            .isEqualTo(4);
        assertThat(allocator.stats().frees()).isZero();
        assertThat(router.releasesPassed.sum()).isEqualTo(4);
        assertThat(router.allocationsPassed.sum()).isEqualTo(1);
    }

    @Test
    void aViewOfKmem4jMemoryIsRefusedOnTheReleasePathAndNothingIsFreed() throws Throwable {
        final Object pool = loader(ACME + "#take(int)/" + ACME + "#give(java.nio.ByteBuffer)").loadClass(ACME)
            .getConstructor().newInstance();
        final ByteBuffer b = (ByteBuffer) call(pool, "take", 256);

        for (final ByteBuffer view : List.of(b.slice(8, 16), b.duplicate(), b.asReadOnlyBuffer())) {
            assertThatThrownBy(() -> call(pool, "give", view)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("duplicate or slice");
        }
        assertThat(counter(pool, "given")).as("kmem4j's memory never reaches the pool's own release").isZero();
        assertThat(allocator.stats().liveBuffers()).as("nothing freed").isEqualTo(1);
        b.put(255, (byte) 7);
        assertThat(b.get(255)).isEqualTo((byte) 7);
    }

    @Test
    void aTrackedKmem4jBufferGivenToAPoolIsReleasedOnce() throws Throwable {
        final Object pool = loader(ACME + "#take(int)/" + ACME + "#give(java.nio.ByteBuffer)").loadClass(ACME)
            .getConstructor().newInstance();
        final ByteBuffer tracked = allocator.allocate(512);

        call(pool, "give", tracked);
        call(pool, "give", tracked);
        final AllocatorStats s = allocator.stats();
        assertThat(s.frees()).as("released once through its cleaner").isEqualTo(1);
        assertThat(s.liveBuffers()).isZero();
        assertThat(counter(pool, "given")).isZero();
    }

    // ---------------------------------------------------------------- Netty's shape: +original, handle, resize

    private Class<?> unsafeStylePool() throws Exception {
        final String p = UNSAFE_STYLE + "#";
        final Class<?> c = loader(p + "allocate(long)/" + p + "resize(java.nio.ByteBuffer,int)/" + p
            + "free(java.nio.ByteBuffer)+original/" + UNSAFE_STYLE + "$Handle#clean()+original").loadClass(UNSAFE_STYLE);
        for (final String f : List.of("COUNTER", "OWN_FREES", "OWN_ALLOCATIONS", "OWN_RESIZES")) {
            ((AtomicLong) c.getField(f).get(null)).set(0);
        }
        return c;
    }

    @Test
    void plusOriginalReleaseRunsThePoolsBodyOnTheEmptiedBufferSoItsCounterStaysExact() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 300L);
        assertThat(allocator.isExplicit(b)).isTrue();
        assertThat(staticCounter(pool, "OWN_ALLOCATIONS")).isZero();
        ((AtomicLong) pool.getField("COUNTER").get(null)).addAndGet(300); // as Netty counts around allocate

        call(pool, "free", b);
        assertThat(allocator.stats().explicitFrees()).isEqualTo(1);
        assertThat(staticCounter(pool, "OWN_FREES")).as("the body ran after kmem4j took the buffer").isEqualTo(1);
        assertThat(staticCounter(pool, "COUNTER")).as("the pool's byte counter is exact").isZero();
        assertThat(org.agrona.BufferUtil.address(b)).as("the body saw an address of 0").isZero();

        call(pool, "free", b);
        assertThat(staticCounter(pool, "OWN_FREES")).as("a second release never reaches the body").isEqualTo(1);
        assertThat(allocator.stats().doubleFrees()).isEqualTo(1);
    }

    /**
     * Two threads release the same explicit buffers at the same moment through a {@code +original}
     * release: only the release that took the buffer back may run the pool's body, so the pool's byte
     * counter stays exact (review finding: the loser of the race, counted as a double free, ran the
     * body a second time and decremented the counter twice).
     */
    @Test
    void racingPlusOriginalReleasesRunThePoolsBodyOncePerBuffer() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final Method allocate = pool.getMethod("allocate", long.class);
        final Method free = pool.getMethod("free", ByteBuffer.class);
        final int rounds = 1000; // a race is lost about once per 40,000 releases before the fix
        final ByteBuffer[] buffers = new ByteBuffer[256];
        final java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(2);
        final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        final Runnable racer = () -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    barrier.await(); // buffers filled
                    for (final ByteBuffer b : buffers) {
                        free.invoke(null, b);
                    }
                    barrier.await(); // both done
                }
            } catch (final Throwable t) {
                failure.compareAndSet(null, t);
                barrier.reset();
            }
        };
        final Thread other = new Thread(racer, "racing-release");
        other.start();
        for (int r = 0; r < rounds && failure.get() == null; r++) {
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = (ByteBuffer) allocate.invoke(null, 64L);
            }
            try {
                barrier.await();
                for (final ByteBuffer b : buffers) {
                    free.invoke(null, b);
                }
                barrier.await();
            } catch (final java.util.concurrent.BrokenBarrierException e) {
                break;
            }
        }
        other.join();
        assertThat(failure.get()).isNull();
        final long released = (long) rounds * buffers.length;
        assertThat(allocator.stats().explicitFrees()).isEqualTo(released);
        assertThat(allocator.stats().doubleFrees()).as("each racing second release counted").isEqualTo(released);
        assertThat(staticCounter(pool, "OWN_FREES")).as("the body ran once per buffer").isEqualTo(released);
        assertThat(staticCounter(pool, "COUNTER")).isEqualTo(-64 * released);
    }

    @Test
    void plusOriginalNeverRunsThePoolsBodyOnATrackedKmem4jBufferOrAView() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer tracked = allocator.allocate(512);
        call(pool, "free", tracked);
        assertThat(allocator.stats().frees()).as("released through its cleaner").isEqualTo(1);
        assertThat(staticCounter(pool, "OWN_FREES")).as("its address is still set: the body must not see it")
            .isZero();

        final ByteBuffer explicit = (ByteBuffer) call(pool, "allocate", 512L);
        assertThatThrownBy(() -> call(pool, "free", explicit.slice(0, 16))).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("duplicate or slice");
        assertThat(staticCounter(pool, "OWN_FREES")).isZero();
        assertThat(allocator.stats().liveBuffers()).isEqualTo(1);
    }

    @Test
    void aHandlesNoArgumentReleaseTakesItsBufferFieldBack() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 4096L);
        final Class<?> handleType = pool.getClassLoader().loadClass(UNSAFE_STYLE + "$Handle");
        final Object handle = handleType.getConstructor(ByteBuffer.class).newInstance(b);
        final Object foreign = handleType.getConstructor(ByteBuffer.class).newInstance(ByteBuffer.allocateDirect(10));

        call(handle, "clean");
        call(foreign, "clean");
        assertThat(allocator.stats().explicitFrees()).isEqualTo(1);
        assertThat(staticCounter(pool, "OWN_FREES")).as("+original: both bodies ran").isEqualTo(2);
        assertThat(staticCounter(pool, "COUNTER")).isEqualTo(-4096 - 10);
    }

    @Test
    void resizeWithinTheWindowStaysWithKmem4jAndCopies() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 100L);
        for (int i = 0; i < 100; i++) {
            b.put(i, (byte) i);
        }
        final ByteBuffer grown = (ByteBuffer) call(pool, "resize", b, 5000);
        assertThat(allocator.isExplicit(grown)).isTrue();
        assertThat(grown.capacity()).isEqualTo(5000);
        for (int i = 0; i < 100; i++) {
            assertThat(grown.get(i)).isEqualTo((byte) i);
        }
        assertThat(grown.get(100)).as("beyond the old contents: zero").isZero();
        assertThat(allocator.stats().liveBuffers()).as("the old buffer went back").isEqualTo(1);
        assertThat(staticCounter(pool, "OWN_RESIZES")).isZero();
        assertThat(staticCounter(pool, "OWN_ALLOCATIONS")).isZero();
    }

    @Test
    void resizeOutOfTheWindowHandsTheContentsToThePoolsOwnMemory() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 1000L);
        b.put(0, "kmem4j".getBytes(StandardCharsets.US_ASCII));
        final ByteBuffer grown = (ByteBuffer) call(pool, "resize", b, 1 << 20);
        assertThat(allocator.ownsMemoryOf(grown)).isFalse();
        assertThat(staticCounter(pool, "OWN_RESIZES")).as("the pool's own body ran").isEqualTo(1);
        assertThat(staticCounter(pool, "OWN_ALLOCATIONS")).as("the pool's own body allocated").isEqualTo(1);
        final byte[] head = new byte[6];
        grown.get(0, head);
        assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("kmem4j");
        assertThat(allocator.stats().liveBuffers()).isZero();

        final ByteBuffer foreign = ByteBuffer.allocateDirect(10);
        call(pool, "resize", foreign, 20);
        assertThat(staticCounter(pool, "OWN_RESIZES")).as("a foreign buffer is resized by the pool").isEqualTo(2);
        assertThat(router.resizesPassed.sum()).isEqualTo(1);
    }

    /**
     * A resize body that throws (its own size limit, an {@code OutOfMemoryError} from
     * {@code Unsafe.reallocateMemory}) leaves the caller holding the old buffer: it must still be valid,
     * with its contents, and still kmem4j's (review finding: kmem4j had already released its block and
     * cleared its address, so the next access crashed the JVM).
     */
    @Test
    void aResizeBodyThatThrowsLeavesTheOldBufferValidWithItsContents() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 1000L);
        b.put(0, "kmem4j".getBytes(StandardCharsets.US_ASCII));
        final int overLimit = (int) pool.getField("RESIZE_LIMIT").getLong(null) + 1;
        assertThatThrownBy(() -> call(pool, "resize", b, overLimit)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("pool limit");
        assertThat(staticCounter(pool, "OWN_RESIZES")).as("the pool's own body ran").isEqualTo(1);
        assertThat(org.agrona.BufferUtil.address(b)).as("the old buffer has its address (checked before reading)")
            .isNotZero();
        final byte[] head = new byte[6];
        b.get(0, head);
        assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("kmem4j");
        assertThat(allocator.isExplicit(b)).isTrue();
        assertThat(allocator.stats().liveBuffers()).as("its block is still taken").isEqualTo(1);

        call(pool, "free", b);
        assertThat(allocator.stats().liveBuffers()).isZero();
        assertThat(allocator.stats().explicitFrees()).isEqualTo(1);
        assertThat(allocator.stats().doubleFrees()).isZero();
    }

    /**
     * After the agent's shutdown hook (application shutdown hooks still run pool code) no path takes
     * memory from kmem4j: a resize of a kmem4j buffer to a size kmem4j serves runs the pool's own body
     * (review finding: it was still served from the slabs), and kmem4j's buffers still come back.
     */
    @Test
    void afterShutdownResizesAndAllocationsAreThePoolsOwnAndReleasesStillComeBack() throws Throwable {
        final Class<?> pool = unsafeStylePool();
        final ByteBuffer b = (ByteBuffer) call(pool, "allocate", 100L);
        final ByteBuffer kept = (ByteBuffer) call(pool, "allocate", 100L);
        b.put(0, (byte) 42);
        router.stopAllocating(bridge);

        final ByteBuffer fresh = (ByteBuffer) call(pool, "allocate", 100L);
        assertThat(allocator.ownsMemoryOf(fresh)).isFalse();
        final ByteBuffer grown = (ByteBuffer) call(pool, "resize", b, 200);
        assertThat(allocator.ownsMemoryOf(grown)).as("the resized buffer is the pool's own").isFalse();
        assertThat(staticCounter(pool, "OWN_RESIZES")).isEqualTo(1);
        assertThat(grown.get(0)).as("contents kept").isEqualTo((byte) 42);
        call(pool, "free", kept);
        assertThat(allocator.stats().liveBuffers()).as("both kmem4j buffers came back").isZero();
    }

    // ---------------------------------------------------------------- pools that do not fit

    @Test
    void aPoolWhoseReleaseHasNoShapeIsLeftAloneWhole() throws Throwable {
        final RewritingLoader l = loader(ACME + "#take(int)/" + ACME + "#giveName(java.lang.String)");
        final Object pool = l.loadClass(ACME).getConstructor().newInstance();
        final ByteBuffer b = (ByteBuffer) call(pool, "take", 100);
        assertThat(allocator.ownsMemoryOf(b)).as("take() is not rewritten either").isFalse();
        assertThat(counter(pool, "taken")).isEqualTo(1);
        assertThat(l.transformer.poolsLeftAlone.sum()).isEqualTo(1);
        assertThat(l.transformer.rewrittenMethods.sum()).isZero();
    }

    @Test
    void aPoolNamingAMissingMethodOrClassIsLeftAlone() throws Throwable {
        for (final String pools : List.of(ACME + "#take(int)/" + ACME + "#nope(java.nio.ByteBuffer)",
            ACME + "#take(int)/com.example.Missing#give(java.nio.ByteBuffer)",
            ACME + "#take(long)/" + ACME + "#give(java.nio.ByteBuffer)",
            ACME + "#give(java.nio.ByteBuffer)/" + ACME + "#give(java.nio.ByteBuffer)",
            ACME + "#take(int)+original/" + ACME + "#give(java.nio.ByteBuffer)",
            ACME + "#take(int)/" + FIX + "TwoBuffersHandle#release()",
            ACME + "#take(int)/" + FIX + "TwoBuffersHandle#releaseAll()")) {
            final RewritingLoader l = loader(pools);
            final Object pool = l.loadClass(ACME).getConstructor().newInstance();
            assertThat(allocator.ownsMemoryOf((ByteBuffer) call(pool, "take", 64))).as(pools).isFalse();
            assertThat(l.transformer.poolsLeftAlone.sum()).as(pools).isEqualTo(1);
        }
    }

    /** Defines only the classes it is given (from the test's class path), each through {@code transformer}. */
    static final class ListedLoader extends ClassLoader {
        private final PoolTransformer transformer;
        private final List<String> classes;

        ListedLoader(final String name, final ClassLoader parent, final PoolTransformer transformer,
                     final String... classes) {
            super(name, parent);
            this.transformer = transformer;
            this.classes = List.of(classes);
        }

        @Override
        protected Class<?> findClass(final String name) throws ClassNotFoundException {
            if (!classes.contains(name)) {
                throw new ClassNotFoundException(name);
            }
            final byte[] original = RewritingLoader.bytes(name);
            final byte[] rewritten = transformer.transform(null, this, name.replace('.', '/'), null, null, original);
            final byte[] b = rewritten != null ? rewritten : original;
            return defineClass(name, b, 0, b.length);
        }

        @Override
        protected java.net.URL findResource(final String name) {
            return classes.contains(name.replace('/', '.').replaceFirst("\\.class$", ""))
                ? PoolTransformerTest.class.getClassLoader().getResource(name) : null;
        }
    }

    /**
     * A pool whose release class is the application's and whose allocation class is a child loader's
     * (a plug-in): the application loader leaves the pool alone (it sees no allocation class), so the
     * child must too, whichever class loads first (review finding: the child rewrote the allocation and
     * kmem4j's buffers reached the release left as written, whose {@code Unsafe.freeMemory} aborts).
     */
    @Test
    void aPoolSplitBetweenAParentAndAChildLoaderIsLeftAloneInBoth() throws Throwable {
        final String taker = FIX + "SplitTaker";
        final String releaser = FIX + "SplitReleaser";
        for (final boolean releaseFirst : new boolean[] {true, false}) {
            final PoolTransformer t = new PoolTransformer(bridge, PoolSpec.parsePools(taker + "#take(int)/" + releaser
                + "#give(java.nio.ByteBuffer)"), List.of());
            final ListedLoader app = new ListedLoader("app", ClassLoader.getPlatformClassLoader(), t, releaser);
            final ListedLoader plugin = new ListedLoader("plugin", app, t, taker);
            final Class<?> release = releaseFirst ? app.loadClass(releaser) : null;
            final Class<?> take = plugin.loadClass(taker);
            assertThat(take.getClassLoader()).isSameAs(plugin);
            assertThat(plugin.loadClass(releaser).getClassLoader()).isSameAs(app);
            assertThat(release == null || release == plugin.loadClass(releaser)).isTrue();

            final ByteBuffer b = (ByteBuffer) call(take, "take", 4096);
            assertThat(allocator.ownsMemoryOf(b)).as("release first: %s", releaseFirst).isFalse();
            assertThat(t.rewrittenMethods.sum()).as("release first: %s", releaseFirst).isZero();
            assertThat(t.poolsLeftAlone.sum()).as("left alone in both loaders").isEqualTo(2);
            call(plugin.loadClass(releaser), "give", b);
        }
        assertThat(allocator.stats().liveBuffers()).isZero();
    }

    // ---------------------------------------------------------------- caller exclusions

    @Test
    void excludedCallersCallTheJdksOwnAllocation() throws Throwable {
        final RewritingLoader l = loader("", "io.kmem4j.agent.fixtures.Excluded");
        final Object caller = l.loadClass(FIX + "ExcludedCaller").getConstructor().newInstance();
        final ByteBuffer b = (ByteBuffer) call(caller, "apply", 100);
        assertThat(b.isDirect()).isTrue();
        assertThat(b.capacity()).isEqualTo(100);
        assertThat(l.transformer.excludedClasses.sum()).isEqualTo(1);
        final byte[] rewritten = l.transformer.transform(null, l, (FIX + "ExcludedCaller").replace('.', '/'), null,
            null, RewritingLoader.bytes(FIX + "ExcludedCaller"));
        assertThat(new String(rewritten, StandardCharsets.ISO_8859_1)).as("the call site names the bridge")
            .contains("java/nio/Kmem4jBridge").contains(BootstrapBridge.JDK_ALLOCATE);
        assertThat(loader("", "com.other.").transformer.transform(null, l, (FIX + "ExcludedCaller").replace('.', '/'),
            null, null, RewritingLoader.bytes(FIX + "ExcludedCaller"))).as("a class outside the prefixes").isNull();
    }
}
