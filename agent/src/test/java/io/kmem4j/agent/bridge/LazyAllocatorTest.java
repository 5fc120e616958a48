package io.kmem4j.agent.bridge;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The allocator built at the first direct allocation: nothing before it, one build however many
 * threads ask at once, the bridge handed to the interceptor, and the JDK in charge when the build
 * fails or is under way on the asking thread. The bridge is the real {@code java.nio.Kmem4jBridge}
 * (this JVM's {@code ByteBuffer} is not retransformed, so only these tests read it).
 */
class LazyAllocatorTest {
    private static final SlabAllocatorConfig CONFIG = SlabAllocatorConfig.builder().chunkSizeBytes(1 << 20).build();

    private BootstrapBridge.Members bridge;
    private final List<SlabAllocator> built = new ArrayList<>();

    @BeforeEach
    void bridge() throws Exception {
        bridge = BootstrapBridge.members();
        assertThat(bridge.allocator.get()).as("the bridge is free for this test").isNull();
    }

    @AfterEach
    void close() throws Exception {
        bridge.allocator.set(null);
        synchronized (built) {
            built.forEach(SlabAllocator::close);
        }
    }

    /** The real constructor, counted and closed after the test. */
    private Function<SlabAllocatorConfig, SlabAllocator> counting(final AtomicInteger builds) {
        return config -> {
            builds.incrementAndGet();
            final SlabAllocator a = new SlabAllocator(config);
            synchronized (built) {
                built.add(a);
            }
            return a;
        };
    }

    /** Why builds failed for good, as the agent's state would be told. */
    private final List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();

    private LazyAllocator installed(final Function<SlabAllocatorConfig, SlabAllocator> factory) throws Exception {
        return installed(factory, LazyAllocator.WAIT_MILLIS);
    }

    private LazyAllocator installed(final Function<SlabAllocatorConfig, SlabAllocator> factory, final long waitMillis)
        throws Exception {
        final LazyAllocator lazy = new LazyAllocator(CONFIG, false, null, bridge, failures::add, factory, waitMillis);
        bridge.allocator.set(lazy);
        return lazy;
    }

    @Test
    void nothingIsBuiltBeforeTheFirstRequestWhichIsServedAndHandsTheBridgeToTheInterceptor() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(counting(builds));
        assertThat(lazy.existing()).as("before any request").isNull();
        assertThat(builds.get()).isZero();

        final ByteBuffer b = (ByteBuffer) lazy.apply(100);

        assertThat(b.isDirect()).isTrue();
        assertThat(b.capacity()).isEqualTo(100);
        assertThat(lazy.existing()).isNotNull();
        assertThat(lazy.existing().owns(b)).as("served by the allocator just built").isTrue();
        assertThat(bridge.allocator.get()).as("the bridge now calls the interceptor directly")
            .isSameAs(lazy.interceptor());
        final ByteBuffer second = (ByteBuffer) lazy.apply(200);
        assertThat(lazy.existing().owns(second)).isTrue();
        assertThat(builds.get()).isEqualTo(1);
        assertThat(lazy.existing().stats().allocations()).isEqualTo(2);
    }

    @Test
    void threadsRacingTheFirstRequestBuildOneAllocatorAndAreAllServedByIt() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(config -> {
            try {
                Thread.sleep(50); // a build long enough for every thread to arrive while it runs
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return counting(builds).apply(config);
        });
        final int threads = 8;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<ByteBuffer> buffers = new ArrayList<>();
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread thread = new Thread(() -> {
                try {
                    start.await(10, TimeUnit.SECONDS);
                    final ByteBuffer b = (ByteBuffer) lazy.apply(64);
                    synchronized (buffers) {
                        buffers.add(b);
                    }
                } catch (final Throwable e) {
                    failed.set(e);
                }
            });
            ts.add(thread);
            thread.start();
        }
        for (final Thread t : ts) {
            t.join(10_000);
        }
        assertThat(failed.get()).isNull();
        assertThat(builds.get()).as("builds").isEqualTo(1);
        assertThat(buffers).hasSize(threads).allSatisfy(b -> assertThat(lazy.existing().owns(b)).isTrue());
        assertThat(lazy.existing().stats().allocations()).isEqualTo(threads);
    }

    @Test
    void theBuildRunsOnAnAgentThreadWhoseOwnAllocationsNeverReachTheSlabs() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final AtomicReference<Object> during = new AtomicReference<>("not asked");
        final AtomicReference<Thread> builder = new AtomicReference<>();
        final AtomicReference<LazyAllocator> self = new AtomicReference<>();
        final LazyAllocator lazy = installed(config -> {
            builder.set(Thread.currentThread());
            during.set(self.get().apply(32)); // e.g. the JDK's own I/O while kmem4j's classes load
            return counting(builds).apply(config);
        });
        self.set(lazy);

        final ByteBuffer b = (ByteBuffer) lazy.apply(32);

        assertThat(builder.get()).as("the building thread").isInstanceOf(AgentThread.class)
            .isNotSameAs(Thread.currentThread());
        assertThat(builder.get().getName()).isEqualTo("kmem4j-init");
        assertThat(during.get()).as("its own request: a buffer outside the slabs (AgentBuffers)")
            .isInstanceOf(ByteBuffer.class);
        assertThat(lazy.existing().owns((ByteBuffer) during.get())).isFalse();
        assertThat(lazy.existing().owns(b)).isTrue();
        assertThat(builds.get()).isEqualTo(1);
    }

    @Test
    void aFailedBuildLeavesTheJdkInChargeForGoodAndSaysWhy() throws Exception {
        final AtomicInteger attempts = new AtomicInteger();
        final LazyAllocator lazy = installed(config -> {
            attempts.incrementAndGet();
            throw new IllegalStateException("no chunk for you");
        });

        assertThat(lazy.apply(64)).as("the JDK allocates").isNull();
        assertThat(lazy.apply(64)).isNull();
        assertThat(lazy.allocator()).isNull();

        assertThat(attempts.get()).as("builds tried").isEqualTo(1);
        assertThat(lazy.failure()).contains("no chunk for you");
        assertThat(bridge.allocator.get()).as("the bridge sends every later request to the JDK").isNull();
        assertThat(failures).as("the agent's state is told once").containsExactly("no chunk for you");
    }

    @Test
    void aBuildThatRanOutOfMemoryIsTriedAgainByALaterRequest() throws Exception {
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(config -> {
            if (attempts.incrementAndGet() == 1) {
                throw new OutOfMemoryError("unable to create native thread");
            }
            return counting(builds).apply(config);
        });

        assertThat(lazy.apply(64)).as("the JDK allocates this one").isNull();
        assertThat(lazy.failure()).as("not off for good").isNull();
        final ByteBuffer b = (ByteBuffer) lazy.apply(64);

        assertThat(lazy.existing().owns(b)).isTrue();
        assertThat(builds.get()).isEqualTo(1);
        assertThat(failures).isEmpty();
    }

    @Test
    void buildsThatKeepFailingWithAVirtualMachineErrorStopAfterTheLimit() throws Exception {
        final AtomicInteger attempts = new AtomicInteger();
        final LazyAllocator lazy = installed(config -> {
            attempts.incrementAndGet();
            throw new StackOverflowError("deep");
        });

        for (int i = 0; i < LazyAllocator.ATTEMPTS + 5; i++) {
            assertThat(lazy.apply(64)).isNull();
        }

        assertThat(attempts.get()).isEqualTo(LazyAllocator.ATTEMPTS);
        assertThat(lazy.failure()).isEqualTo("deep");
        assertThat(failures).containsExactly("deep");
        assertThat(bridge.allocator.get()).isNull();
    }

    @Test
    void aThreadThatWaitsLongerThanTheLimitForABuildGetsTheJdkAndLaterRequestsDoNotWaitAgain() throws Exception {
        final CountDownLatch inBuild = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(config -> {
            inBuild.countDown();
            try {
                release.await(30, TimeUnit.SECONDS); // e.g. a lock the waiting thread holds
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return counting(builds).apply(config);
        }, 2000);

        final long start = System.nanoTime();
        final Object first = lazy.apply(64);
        final long waitedMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(inBuild.await(10, TimeUnit.SECONDS)).isTrue();
        final long again = System.nanoTime();
        final Object second = lazy.apply(64);
        final long secondMillis = (System.nanoTime() - again) / 1_000_000;

        assertThat(first).as("the first request, after its wait: the JDK's").isNull();
        // behaviour, not speed: the first request waited its whole limit (await cannot time out sooner); the
        // second did not wait that limit again (half of it is far above any scheduling delay)
        assertThat(waitedMillis).as("it waited, then gave up").isGreaterThanOrEqualTo(2000);
        assertThat(second).as("a request while the slow build still runs: the JDK's").isNull();
        assertThat(secondMillis).as("without waiting again").isLessThan(1000);

        release.countDown();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lazy.existing() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        final ByteBuffer b = (ByteBuffer) lazy.apply(64);
        assertThat(lazy.existing().owns(b)).as("after the build: kmem4j's").isTrue();
        assertThat(builds.get()).isEqualTo(1);
    }

    @Test
    void stopWhileABuildRunsLeavesKmem4jOutOfTheBridgeWhenItEnds() throws Exception {
        final CountDownLatch inBuild = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final LazyAllocator lazy = installed(config -> {
            inBuild.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return counting(new AtomicInteger()).apply(config);
        });
        final Thread asking = new Thread(() -> lazy.apply(64));
        asking.start();
        assertThat(inBuild.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(lazy.stop()).isTrue();
        release.countDown();
        asking.join(10_000);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lazy.existing() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }

        assertThat(lazy.existing()).as("the build finished").isNotNull();
        assertThat(bridge.allocator.get()).as("but kmem4j stays out of the bridge").isNull();
    }

    @Test
    void stopTakesKmem4jOutOfTheBridgeAndStartsNoBuild() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(counting(builds));

        assertThat(lazy.stop()).as("kmem4j was in the bridge").isTrue();

        assertThat(bridge.allocator.get()).isNull();
        assertThat(lazy.apply(64)).isNull();
        assertThat(builds.get()).isZero();
        assertThat(lazy.stop()).as("a second stop finds nothing of kmem4j's in the bridge").isFalse();
    }

    @Test
    void stopAfterTheBuildTakesTheInterceptorOut() throws Exception {
        final LazyAllocator lazy = installed(counting(new AtomicInteger()));
        assertThat(lazy.apply(64)).isNotNull();

        assertThat(lazy.stop()).isTrue();

        assertThat(bridge.allocator.get()).isNull();
    }

    @Test
    void theAgentsOwnThreadsAllocationsNeverBuildTheAllocator() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(counting(builds));
        final AtomicReference<Object> answer = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(1);
        new AgentThread("kmem4j-test", () -> {
            answer.set(lazy.apply(64));
            done.countDown();
        }).start();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(builds.get()).isZero();
        assertThat(lazy.existing()).isNull();
        assertThat(answer.get()).as("a buffer outside the budget (AgentBuffers), not a slab buffer")
            .isInstanceOf(ByteBuffer.class);
    }

    @Test
    void requestsOfSizesTheSlabsDoNotServeBuildNothingUntilAServedOneArrives() throws Exception {
        final AtomicInteger builds = new AtomicInteger();
        final LazyAllocator lazy = installed(counting(builds));
        final int max = SlabAllocator.maxCapacity(CONFIG);

        assertThat(lazy.apply(max + 1)).as("above the largest size class: the JDK's").isNull();
        assertThat(lazy.apply(Integer.MAX_VALUE)).isNull();
        if (CONFIG.minCapacityBytes() > 0) {
            assertThat(lazy.apply(CONFIG.minCapacityBytes() - 1)).as("below the smallest served capacity").isNull();
        }
        assertThat(builds.get()).as("no build for sizes the slabs do not serve").isZero();
        assertThat(lazy.existing()).isNull();
        assertThat(bridge.allocator.get()).as("still waiting for a served size").isSameAs(lazy);

        final ByteBuffer b = (ByteBuffer) lazy.apply(max);
        assertThat(lazy.existing().owns(b)).as("the largest size class is served, and builds").isTrue();
        assertThat(builds.get()).isEqualTo(1);
        assertThat(lazy.apply(max + 1)).as("after the build as before: the JDK's").isNull();
        assertThat(lazy.existing().stats().fallbacks()).as("counted once the allocator exists").isEqualTo(1);
    }
}
