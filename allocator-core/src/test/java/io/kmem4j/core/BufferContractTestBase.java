package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static io.kmem4j.core.TestSupport.checkPattern;
import static io.kmem4j.core.TestSupport.fill;
import static io.kmem4j.core.TestSupport.firstNot;
import static io.kmem4j.core.TestSupport.invokeCleaner;
import static io.kmem4j.core.TestSupport.writePattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.InvalidMarkException;
import java.nio.LongBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The buffer contract of DESIGN.md and cases C7, C8, C10, C18, C19, run against each
 * configuration by a subclass.
 */
abstract class BufferContractTestBase {
    /** Which allocation flavour a subclass tests. */
    enum Flavour { TRACKED, EXPLICIT }

    protected SlabAllocator allocator;

    abstract SlabAllocatorConfig config();

    Flavour flavour() {
        return Flavour.TRACKED;
    }

    ByteBuffer alloc(final int capacity) {
        return flavour() == Flavour.TRACKED ? allocator.allocate(capacity) : allocator.allocateExplicit(capacity);
    }

    /** Releases the way users of the flavour do: invokeCleaner for tracked, free() for explicit. */
    void release(final ByteBuffer b) {
        if (flavour() == Flavour.TRACKED) {
            invokeCleaner(b);
        } else {
            allocator.free(b);
        }
    }

    void assumeTracked() {
        Assumptions.assumeTrue(flavour() == Flavour.TRACKED, "tracked flavour only (JDK cleaner)");
    }

    @BeforeEach
    void createAllocator() {
        allocator = new SlabAllocator(config());
    }

    @AfterEach
    void checkAndClose() {
        try {
            allocator.checkInvariants();
        } finally {
            allocator.close();
        }
    }

    private List<Integer> sizesAroundEveryClassBoundary() {
        final SizeClasses classes = new SizeClasses(config().maxSizeClassBytes());
        final List<Integer> sizes = new ArrayList<>();
        for (int c = 0; c < classes.count(); c++) {
            final int s = classes.size(c);
            for (final int n : new int[] {s - 1, s, s + 1}) {
                if (n >= config().minCapacityBytes() && n <= classes.largest()) {
                    sizes.add(n);
                }
            }
        }
        sizes.add(1);
        return sizes;
    }

    @Test
    void shapeMatchesAllocateDirectAroundEveryClassBoundary() {
        for (final int n : sizesAroundEveryClassBoundary()) {
            final ByteBuffer b = alloc(n);
            assertThat(allocator.owns(b)).as("served from slabs: %d", n).isTrue();
            assertThat(b.capacity()).isEqualTo(n);
            assertThat(b.position()).isZero();
            assertThat(b.limit()).isEqualTo(n);
            assertThat(b.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
            assertThat(b.isDirect()).isTrue();
            assertThat(b.isReadOnly()).isFalse();
            assertThat(address(b) & 63).as("cache-line aligned").isZero();
            assertThat(firstNot(b, (byte) 0)).as("zero-filled, capacity %d", n).isEqualTo(-1);
            assertThatThrownBy(() -> b.position(0).put(new byte[n + 1])).isInstanceOf(BufferOverflowException.class);
            release(b);
        }
    }

    @Test
    void c18ZeroFilledAfterRecyclingAtEveryBoundary() {
        for (final int n : sizesAroundEveryClassBoundary()) {
            final ByteBuffer b = alloc(n);
            fill(b, (byte) 0x5A);
            final long a = address(b);
            release(b);
            final ByteBuffer again = alloc(n);
            assertThat(address(again)).as("recycled the same block for %d", n).isEqualTo(a);
            assertThat(firstNot(again, (byte) 0)).as("zero-filled after recycling, capacity %d", n).isEqualTo(-1);
            release(again);
        }
    }

    @Test
    void c19NoStateSurvivesRecycling() {
        final ByteBuffer b = alloc(64);
        b.order(ByteOrder.LITTLE_ENDIAN);
        b.position(10).mark();
        b.putInt(0, 1);
        release(b);
        final ByteBuffer b2 = alloc(64);
        assertThat(b2.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        assertThat(b2.position()).isZero();
        assertThat(b2.limit()).isEqualTo(64);
        assertThat(b2.capacity()).isEqualTo(64);
        assertThatThrownBy(b2::reset).isInstanceOf(InvalidMarkException.class);
        assertThat(b2.isDirect()).isTrue();
        assertThat(b2.isReadOnly()).isFalse();
        assertThat(b2.getInt(0)).isZero();
    }

    @Test
    void c7ExplicitFreeOfRootReturnsAtOnceAndViewIsRefused() {
        assumeTracked();
        final ByteBuffer r = allocator.allocate(1024);
        final long before = allocator.stats().explicitFrees();
        invokeCleaner(r);
        assertThat(allocator.stats().explicitFrees()).isEqualTo(before + 1);
        assertThat(allocator.stats().bytesInUse()).isZero();

        final ByteBuffer root = allocator.allocate(1031);
        final ByteBuffer s = root.alignedSlice(8);
        final long frees = allocator.stats().frees();
        assertThatThrownBy(() -> invokeCleaner(s)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("duplicate or slice");
        assertThatThrownBy(() -> allocator.free(s)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("duplicate or slice");
        assertThat(allocator.stats().frees()).isEqualTo(frees);
        assertThat(allocator.stats().bytesInUse()).isEqualTo(1031);
        allocator.free(root);
        assertThat(allocator.stats().bytesInUse()).isZero();
    }

    @Test
    void c8LiveViewKeepsItsMemory() {
        assumeTracked();
        final List<ByteBuffer> views = new ArrayList<>();
        final List<LongBuffer> longViews = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            ByteBuffer r = allocator.allocate(4096);
            fill(r, (byte) 0xAB);
            switch (k) {
                case 0: views.add(r.duplicate()); break;
                case 1: views.add(r.slice(16, 1024)); break;
                case 2: views.add(r.asReadOnlyBuffer()); break;
                default: longViews.add(r.asLongBuffer()); break;
            }
            r = null; // the root becomes unreachable; only the view holds the memory
        }
        final List<ByteBuffer> others = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            System.gc();
            final ByteBuffer o = allocator.allocate(4096);
            fill(o, (byte) 0xFF);
            others.add(o);
        }
        for (final ByteBuffer v : views) {
            for (int i = 0; i < v.capacity(); i++) {
                assertThat(v.get(i)).as("view byte %d", i).isEqualTo((byte) 0xAB);
            }
        }
        for (final LongBuffer v : longViews) {
            for (int i = 0; i < v.capacity(); i++) {
                assertThat(v.get(i)).isEqualTo(0xABABABABABABABABL);
            }
        }
        others.forEach(TestSupport::invokeCleaner);
    }

    @Test
    void c10RacingDoubleReleaseIsACountedNoOp() throws Exception {
        final int rounds = 10_000;
        final CyclicBarrier barrier = new CyclicBarrier(3);
        final AtomicReference<ByteBuffer> current = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Runnable releaser = () -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    barrier.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    release(current.get());
                    barrier.await(30, java.util.concurrent.TimeUnit.SECONDS);
                }
            } catch (final Throwable t) {
                failure.set(t);
            }
        };
        final Thread t1 = new Thread(releaser);
        final Thread t2 = new Thread(releaser);
        t1.start();
        t2.start();
        final Thread driver = Thread.currentThread();
        for (int i = 0; i < rounds && failure.get() == null; i++) {
            current.set(alloc(256));
            barrier.await(30, java.util.concurrent.TimeUnit.SECONDS);
            barrier.await(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        t1.join();
        t2.join();
        assertThat(failure.get()).isNull();
        final AllocatorStats s = allocator.stats();
        assertThat(s.allocations()).isEqualTo(rounds);
        assertThat(s.frees()).as("each buffer released exactly once").isEqualTo(rounds);
        assertThat(s.bytesInUse()).isZero();
        assertThat(driver.isAlive()).isTrue();
        assertDistinctLiveBuffers(1000, 64, 512);
    }

    @Test
    void c10StaleReleaseAfterReuseDoesNotFreeTheNewBuffer() {
        final ByteBuffer b = alloc(512);
        final long a = address(b);
        release(b);
        final ByteBuffer b2 = alloc(512);
        assertThat(address(b2)).isEqualTo(a);
        release(b); // stale: the JDK cleaner already ran (tracked) or the address was cleared (explicit)
        assertThat(allocator.stats().liveBuffers()).isEqualTo(1);
        final ByteBuffer b3 = alloc(512);
        assertThat(address(b3)).isNotEqualTo(address(b2));
        assertDistinctLiveBuffers(1000, 500, 520);
        release(b2);
        release(b3);
    }

    /** Allocates {@code n} buffers, writes a distinct pattern into each and verifies all. */
    void assertDistinctLiveBuffers(final int n, final int minSize, final int maxSize) {
        final SplittableRandom rnd = new SplittableRandom(7);
        final List<ByteBuffer> live = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final ByteBuffer b = alloc(rnd.nextInt(minSize, maxSize + 1));
            writePattern(b, i);
            live.add(b);
        }
        for (int i = 0; i < n; i++) {
            assertThat(checkPattern(live.get(i), i)).as("buffer %d intact", i).isEqualTo(-1);
        }
        live.forEach(this::release);
    }

    @Test
    void gcReleasesDroppedBuffersOnTheReferenceHandlerWithoutBlocking() {
        assumeTracked();
        for (int i = 0; i < 2000; i++) {
            allocator.allocate(1000 + i % 3000);
        }
        Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
            System.gc();
            return allocator.stats().gcFrees() == 2000;
        });
        final AllocatorStats s = allocator.stats();
        assertThat(s.bytesInUse()).isZero();
        assertThat(s.liveBuffers()).isZero();
        assertThat(s.hookFailures()).isZero();
        // the deferred frees come back: allocate again and see the remote frees absorbed
        for (int i = 0; i < 2000; i++) {
            invokeCleaner(allocator.allocate(1000 + i % 3000));
        }
        assertThat(allocator.stats().remoteFreesAbsorbed()).isGreaterThan(0);
    }

    @Test
    void negativeCapacityIsRejectedAndUnservedSizesFallBackToTheJdk() {
        assertThatThrownBy(() -> allocator.allocate(-1)).isInstanceOf(IllegalArgumentException.class);
        final long before = allocator.stats().fallbacks();
        final ByteBuffer big = allocator.allocate(allocator.maxCapacity() + 1);
        assertThat(big.capacity()).isEqualTo(allocator.maxCapacity() + 1);
        assertThat(allocator.owns(big)).isFalse();
        assertThat(allocator.stats().fallbacks()).isEqualTo(before + 1);
        assertThat(firstNot(big, (byte) 0)).isEqualTo(-1);
        allocator.free(big); // a JDK root buffer is passed to the JDK's cleaner
        final ByteBuffer empty = allocator.allocate(0);
        assertThat(empty.capacity()).isZero();
    }

    @Test
    void freeRefusesForeignBuffersWithClearMessages() {
        assumeTracked();
        assertThatThrownBy(() -> allocator.free(ByteBuffer.allocate(16))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not a direct buffer");
        final ByteBuffer ours = allocator.allocate(100);
        assertThat(allocator.owns(ours.duplicate())).isFalse();
        assertThat(allocator.owns(ByteBuffer.allocateDirect(100))).isFalse();
        assertThat(allocator.owns(ByteBuffer.allocate(100))).isFalse();
        assertThat(allocator.owns(null)).isFalse();
        allocator.free(ours);
        allocator.free(ours); // second release: a no-op, as invokeCleaner twice
        assertThat(allocator.stats().frees()).isEqualTo(1);
    }
}
