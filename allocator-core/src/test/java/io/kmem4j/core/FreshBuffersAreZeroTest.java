package io.kmem4j.core;

import static io.kmem4j.core.TestSupport.address;
import static io.kmem4j.core.TestSupport.fill;
import static io.kmem4j.core.TestSupport.firstNot;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A buffer never shows bytes written into another (issue #8, part 4; case C18): buffers of every size
 * around every size-class boundary are filled with 0x5A, released by each route a block can take back
 * into the pool, and the same sizes allocated again must be all zeros, for both flavours and with
 * memory zeroed on release ({@code zeroOnFree=true}) or on allocation ({@code false}). The routes differ
 * in who zeroes: the releasing thread (local), the owner absorbing a deferred free whose first word
 * carries an inbox link (remote, GC on the "Reference Handler"), or the reaper returning an orphan to
 * its slab (the owner had ended). The owner first allocates enough from every class to freeze slabs
 * of its own, so releases on other threads are deferred to it; small magazines make the refills that
 * take those blocks back.
 */
class FreshBuffersAreZeroTest {
    /** How the filled buffers go back. */
    enum Route {
        /** Released on the thread that allocated them. */
        LOCAL,
        /** Released on another thread: deferred frees sent to the owner. */
        REMOTE,
        /** Dropped; GC-driven frees on the "Reference Handler" thread (tracked flavour only). */
        GC,
        /** Released after the allocating thread ended; a new thread allocates. */
        OWNER_ENDED
    }

    static Stream<Arguments> cases() {
        final List<Arguments> all = new ArrayList<>();
        for (final Route route : Route.values()) {
            for (final boolean tracked : new boolean[] {true, false}) {
                for (final boolean zeroOnFree : new boolean[] {true, false}) {
                    if (route != Route.GC || tracked) {
                        all.add(Arguments.of(route, tracked, zeroOnFree));
                    }
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}, tracked={1}, zeroOnFree={2}")
    @MethodSource("cases")
    void buffersAllocatedAfterFilledOnesWereReleasedAreAllZeros(final Route route, final boolean tracked,
                                                                final boolean zeroOnFree) throws Exception {
        // empty chunks are kept (not given back to the JDK): the memory that was filled is handed out again
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().zeroOnFree(zeroOnFree).magazineRounds(4)
            .depotMagazines(1).retainedEmptyChunks(64).reapIntervalMillis(60_000).build());
        final Thread[] ownerThread = new Thread[1];
        final ExecutorService owner = Executors.newSingleThreadExecutor(r -> ownerThread[0] = new Thread(r, "owner"));
        try {
            final List<Integer> sizes = TestSupport.boundarySizes(a);
            final List<ByteBuffer> filled = owner.submit(() -> {
                warmUp(a, sizes, tracked);
                return allocateAll(a, sizes, tracked, (byte) 0x5A);
            }).get();
            final long sentBefore = a.stats().remoteFreesSent();
            final TreeMap<Long, Integer> filledRanges = new TreeMap<>();
            filled.forEach(b -> filledRanges.put(address(b), b.capacity()));
            ExecutorService allocator = owner;
            switch (route) {
                case LOCAL -> owner.submit(() -> releaseAll(a, filled, tracked)).get();
                case REMOTE -> releaseAll(a, filled, tracked);
                case GC -> {
                    final int n = filled.size();
                    filled.clear();
                    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
                        System.gc();
                        return a.stats().gcFrees() == n;
                    });
                }
                case OWNER_ENDED -> {
                    owner.shutdown();
                    assertThat(owner.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
                    ownerThread[0].join(); // the executor terminates a moment before its thread does
                    releaseAll(a, filled, tracked);
                    a.reap(); // the ended owner's cache is adopted, the deferred frees go back to the slabs
                    allocator = Executors.newSingleThreadExecutor(r -> new Thread(r, "next"));
                }
                default -> throw new AssertionError(route);
            }
            if (route == Route.REMOTE || route == Route.OWNER_ENDED) {
                assertThat(a.stats().remoteFreesSent()).as("frees deferred to the owner").isGreaterThan(sentBefore);
            }
            final ExecutorService next = allocator;
            final int[] reused = new int[1];
            next.submit(() -> {
                // twice as many as were released: the refills reach the blocks that came back
                final List<ByteBuffer> fresh = new ArrayList<>();
                for (int round = 0; round < 2; round++) {
                    for (final ByteBuffer b : allocateAll(a, sizes, tracked, (byte) 0)) {
                        final boolean onFilledBytes = overlaps(filledRanges, address(b), b.capacity());
                        assertThat(firstNot(b, (byte) 0)).as("%d-byte buffer at 0x%x (%s) all zeros", b.capacity(),
                            address(b), onFilledBytes ? "over bytes filled with 0x5A" : "never filled").isEqualTo(-1);
                        reused[0] += onFilledBytes ? 1 : 0;
                        fresh.add(b);
                    }
                }
                releaseAll(a, fresh, tracked);
                return null;
            }).get();
            assertThat(reused[0]).as("allocations over bytes that were filled with 0x5A and released").isPositive();
            if (next != owner) {
                next.shutdown();
            }
            assertThat(a.stats().hookFailures()).isZero();
        } finally {
            owner.shutdownNow();
            a.close();
        }
    }

    /**
     * Makes the owner a regular of every class (more allocations than
     * {@link Refill#FREEZE_AFTER_ALLOCATIONS}), so its next refills freeze slabs of its own and
     * releases on other threads are deferred to it. One block per class, allocated and released in turn.
     */
    private static void warmUp(final SlabAllocator a, final List<Integer> sizes, final boolean tracked) {
        for (int c = 0; c < a.classes.count(); c++) {
            final List<ByteBuffer> one = new ArrayList<>(1);
            for (int i = 0; i <= Refill.FREEZE_AFTER_ALLOCATIONS; i++) {
                one.add(tracked ? a.allocate(a.classes.size(c)) : a.allocateExplicit(a.classes.size(c)));
                releaseAll(a, one, tracked);
                one.clear();
            }
        }
    }

    private static boolean overlaps(final TreeMap<Long, Integer> ranges, final long start, final int length) {
        final Map.Entry<Long, Integer> below = ranges.floorEntry(start + Math.max(length, 1) - 1);
        return below != null && below.getKey() + below.getValue() > start;
    }

    /** Allocates three buffers of every size, filled with {@code value}. */
    private static List<ByteBuffer> allocateAll(final SlabAllocator a, final List<Integer> sizes, final boolean tracked,
                                                final byte value) {
        final List<ByteBuffer> out = new ArrayList<>();
        for (final int size : sizes) {
            for (int k = 0; k < 3; k++) {
                final ByteBuffer b = tracked ? a.allocate(size) : a.allocateExplicit(size);
                assertThat(a.owns(b)).isTrue();
                if (value != 0) {
                    fill(b, value);
                }
                out.add(b);
            }
        }
        return out;
    }

    private static void releaseAll(final SlabAllocator a, final List<ByteBuffer> buffers, final boolean tracked) {
        for (final ByteBuffer b : buffers) {
            if (tracked) {
                TestSupport.invokeCleaner(b);
            } else {
                a.free(b);
            }
        }
    }

    /**
     * A new chunk is not zeroed when it is taken from the JDK (memory the application never uses
     * stays out of RSS): each object is zeroed the first time a slab hands it out. The chunk's memory
     * is filled with garbage here before anything is carved from it.
     */
    @ParameterizedTest(name = "zeroOnFree={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void objectsOfAChunkNeverUsedAreZeroedOnTheirFirstHandOut(final boolean zeroOnFree) {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().zeroOnFree(zeroOnFree)
            .reapIntervalMillis(60_000).build())) {
            a.pages.grow(a.pages.snapshot());
            final Chunk c = a.pages.snapshot()[0];
            org.agrona.UnsafeApi.setMemory(c.base, c.size, (byte) 0x5A);
            final List<ByteBuffer> all = new ArrayList<>();
            for (final int size : new int[] {64, 256, 1000, 4096, 20_000, 65_536}) {
                for (int i = 0; i < 40; i++) {
                    final ByteBuffer b = i % 2 == 0 ? a.allocate(size) : a.allocateExplicit(size);
                    assertThat(a.owns(b)).isTrue();
                    assertThat(firstNot(b, (byte) 0)).as("first non-zero byte of a fresh %d B buffer", size).isEqualTo(-1);
                    all.add(b);
                }
            }
            assertThat(a.pages.snapshot()[0]).as("carved from the garbage-filled chunk").isSameAs(c);
            all.forEach(a::free);
        }
    }
}
