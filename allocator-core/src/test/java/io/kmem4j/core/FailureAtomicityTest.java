package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Failure atomicity (issue #8, part 5): when anything fails after a block was taken for a request, the
 * block goes back where it came from (the next allocation of the class gets it), the request goes to
 * the JDK (counted once in {@code fallbacks} and once in {@code allocationFailures}), and every other
 * figure of {@link AllocatorStats}, the sampled sites and the leak detector's table are as before.
 *
 * <p>Failures are injected without touching the hot path: a {@link BufferConstructor} passed to the
 * allocator's package-private constructor throws (as the JDK's constructor does when the heap is
 * exhausted building the buffer or its cleaner, or when its method handle fails), and the maps where
 * explicit buffers are registered (leak detection, site sampling) are swapped by reflection for ones
 * that throw on {@code put}, standing in for a heap {@code OutOfMemoryError} there.
 *
 * <p>The block comes from a loaded magazine (hit), from a refill of an empty one (slow path), or from
 * the tier shared by threads without a private cache (virtual threads; the test thread is put there).
 * A 100 B request (the 128 B class, 512 objects per slab) keeps every refill inside one partial slab.
 */
class FailureAtomicityTest {
    private static final int SIZE = 100;

    /** Where the block of the failing request comes from. */
    enum Source { MAGAZINE_HIT, SLOW_PATH, SHARED_TIER }

    /** The public entry point called. */
    enum Entry {
        ALLOCATE(true), TRY_ALLOCATE(true), ALLOCATE_EXPLICIT(false);

        final boolean tracked;

        Entry(final boolean tracked) {
            this.tracked = tracked;
        }

        ByteBuffer call(final SlabAllocator a) {
            return switch (this) {
                case ALLOCATE -> a.allocate(SIZE);
                case TRY_ALLOCATE -> a.tryAllocate(SIZE);
                case ALLOCATE_EXPLICIT -> a.allocateExplicit(SIZE);
            };
        }
    }

    /** What fails once the block was taken. */
    enum Failure {
        /** The buffer's constructor throws {@code OutOfMemoryError} (heap exhausted, e.g. by its Cleaner). */
        HEAP_EXHAUSTED_IN_CONSTRUCTOR,
        /** The constructor's method handle throws (JdkInternals wraps a checked throwable so). */
        CONSTRUCTOR_HANDLE_THROWS,
        /** Explicit buffer, leak detection on: registering the buffer fails. */
        LEAK_REGISTRATION_FAILS,
        /** Explicit buffer, every allocation sampled: recording its site fails after the site counted it. */
        EXPLICIT_SITE_RECORD_FAILS,
        /** Tracked buffer, every allocation sampled: the constructor fails after the site counted it. */
        CONSTRUCTOR_FAILS_AFTER_SITE_COUNTED;

        boolean fits(final Entry e) {
            return switch (this) {
                case LEAK_REGISTRATION_FAILS, EXPLICIT_SITE_RECORD_FAILS -> !e.tracked;
                case CONSTRUCTOR_FAILS_AFTER_SITE_COUNTED -> e.tracked;
                default -> true;
            };
        }

        SlabAllocatorConfig config() {
            final SlabAllocatorConfig.Builder b = SlabAllocatorConfig.builder().reapIntervalMillis(60_000);
            return switch (this) {
                case LEAK_REGISTRATION_FAILS -> b.explicitLeakDetection(true).build();
                case EXPLICIT_SITE_RECORD_FAILS, CONSTRUCTOR_FAILS_AFTER_SITE_COUNTED -> b.siteSampleRate(1).build();
                default -> b.build();
            };
        }
    }

    static Stream<Arguments> cases() {
        final List<Arguments> all = new ArrayList<>();
        for (final Failure f : Failure.values()) {
            for (final Entry e : Entry.values()) {
                if (f.fits(e)) {
                    for (final Source s : Source.values()) {
                        all.add(Arguments.of(f, e, s));
                    }
                }
            }
        }
        return all.stream();
    }

    /** The JDK's constructor, failing once when armed; remembers the block it was asked to build on. */
    static final class FailingConstructor implements BufferConstructor {
        volatile Failure armed;
        volatile long lastAddress;

        @Override
        public ByteBuffer newBuffer(final int capacity, final long address, final Runnable hook) {
            lastAddress = address;
            final Failure f = armed;
            if (f == Failure.HEAP_EXHAUSTED_IN_CONSTRUCTOR || f == Failure.CONSTRUCTOR_FAILS_AFTER_SITE_COUNTED) {
                armed = null;
                throw new OutOfMemoryError("injected: Java heap space");
            }
            if (f == Failure.CONSTRUCTOR_HANDLE_THROWS) {
                armed = null;
                throw new IllegalStateException(new ReflectiveOperationException("injected"));
            }
            return JdkInternals.newDirectBuffer(capacity, address, hook);
        }
    }

    /** A map whose next {@code put} throws, once, when armed: a heap exhausted inside the map. */
    static final class FailingMap<K, V> extends ConcurrentHashMap<K, V> {
        private static final long serialVersionUID = 1L;
        volatile boolean armed;

        @Override
        public V put(final K key, final V value) {
            if (armed) {
                armed = false;
                throw new OutOfMemoryError("injected: Java heap space (map entry)");
            }
            return super.put(key, value);
        }
    }

    @ParameterizedTest(name = "{0} in {1}, block from {2}")
    @MethodSource("cases")
    void theBlockGoesBackAndNoCounterMoves(final Failure failure, final Entry entry, final Source source)
        throws Throwable {
        final FailingConstructor constructor = new FailingConstructor();
        final SlabAllocator a = new SlabAllocator(failure.config(), constructor);
        try {
            final FailingMap<Long, Object> leakTable = failure == Failure.LEAK_REGISTRATION_FAILS
                ? swapMap(a.leakDetector, "tracked") : null;
            final FailingMap<Long, Object> sampledExplicit = failure == Failure.EXPLICIT_SITE_RECORD_FAILS
                ? swapMap(a.sampler, "explicit") : null;
            TestSupport.onFreshThread("failure-atomicity", () -> {
                final List<ByteBuffer> keep = new ArrayList<>();
                if (source == Source.SHARED_TIER) {
                    useSharedTier(a);
                }
                keep.add(entry.call(a)); // the magazine (or the shared one) is loaded now
                if (source == Source.SLOW_PATH) {
                    final Magazine m = threadCache(a).loaded[a.classes.indexOf(SIZE)];
                    while (m.count > 0) {
                        keep.add(entry.call(a)); // empty it: the next request refills from the partial slab
                    }
                }
                final AllocatorStats before = a.stats();
                final List<SiteStats> sitesBefore = a.outstandingBySite(100);
                constructor.lastAddress = 0;
                constructor.armed = leakTable == null && sampledExplicit == null ? failure : null;
                if (leakTable != null) {
                    leakTable.armed = true;
                }
                if (sampledExplicit != null) {
                    sampledExplicit.armed = true;
                }

                final ByteBuffer result = entry.call(a);

                final long taken = constructor.lastAddress;
                assertThat(taken).as("precondition: a block was taken before the failure").isNotZero();
                assertThat(constructor.armed).as("precondition: the constructor failure was injected").isNull();
                if (leakTable != null) {
                    assertThat(leakTable.armed).as("precondition: the leak registration failure was injected").isFalse();
                    assertThat(leakTable).as("leak detector's table").doesNotContainKey(taken);
                }
                if (sampledExplicit != null) {
                    assertThat(sampledExplicit.armed).as("precondition: the site record failure was injected").isFalse();
                    assertThat(sampledExplicit).as("sampled explicit buffers").doesNotContainKey(taken);
                }
                if (entry == Entry.TRY_ALLOCATE) {
                    assertThat(result).as("tryAllocate: the JDK serves it").isNull();
                } else {
                    assertThat(a.owns(result)).as("served by the JDK").isFalse();
                    assertThat(result.capacity()).isEqualTo(SIZE);
                    assertThat(result.isDirect()).isTrue();
                    assertThat(TestSupport.firstNot(result, (byte) 0)).isEqualTo(-1);
                }
                final AllocatorStats after = a.stats();
                assertThat(TestSupport.statsDiff(before, after, "fallbacks", "allocationFailures"))
                    .as("statistics that moved with the failed request").isEmpty();
                assertThat(after.fallbacks()).as("fallbacks").isEqualTo(before.fallbacks() + 1);
                assertThat(after.allocationFailures()).as("allocationFailures").isEqualTo(before.allocationFailures() + 1);
                assertThat(a.outstandingBySite(100)).as("sampled sites").isEqualTo(sitesBefore);
                a.checkInvariants();

                final ByteBuffer again = entry.tracked ? a.allocate(SIZE) : a.allocateExplicit(SIZE);
                assertThat(TestSupport.address(again)).as("the next request gets the block back").isEqualTo(taken);
                keep.add(again);
                for (final ByteBuffer b : keep) {
                    if (entry.tracked) {
                        TestSupport.invokeCleaner(b);
                    } else {
                        a.free(b);
                    }
                }
                TestSupport.assertDistinctPatterns(a, 1000, failure.ordinal() * 7L + source.ordinal());
                final AllocatorStats end = a.stats();
                assertThat(end.liveBuffers()).isZero();
                assertThat(end.hookFailures()).isZero();
                assertThat(end.leaksDetected()).isZero();
                assertThat(end.doubleFrees()).isZero();
                a.checkInvariants();
            });
        } finally {
            a.close();
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** Makes the calling thread use the shared tier, as a virtual thread does. */
    private static void useSharedTier(final SlabAllocator a) {
        a.registry.bindCurrent(a.registry.shared);
    }

    private static ThreadCache threadCache(final SlabAllocator a) {
        return a.registry.current();
    }

    /** Replaces {@code owner.name} (a map) by a {@link FailingMap} holding the same entries. */
    @SuppressWarnings("unchecked")
    private static FailingMap<Long, Object> swapMap(final Object owner, final String name)
        throws ReflectiveOperationException {
        final Field f = field(owner.getClass(), name);
        final FailingMap<Long, Object> m = new FailingMap<>();
        m.putAll((Map<Long, Object>) f.get(owner));
        f.set(owner, m);
        return m;
    }

    private static Field field(final Class<?> owner, final String name) throws NoSuchFieldException {
        final Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
