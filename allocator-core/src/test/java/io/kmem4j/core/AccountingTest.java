package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link Accounting}: figures derived instead of counted on the hit paths (hits from
 * misses, GC frees from the GC cleaner thread's own cache) and one definition of the hit rate.
 */
class AccountingTest {
    /**
     * JDK 26+: a thread about to grow runs the JDK's pending buffer cleaners itself
     * ({@link ReferenceProcessing#help}), inside kmem4j's slow path; the frees they make are GC's (a
     * dropper program that frees nothing counted 1,500-18,000 of 24,000 as explicit). Stood in for
     * here, on any JDK, by the flag that help sets around them.
     */
    @Test
    void freesRunWhileHelpingTheJdksCleanersAreGcFrees() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            final ByteBuffer helped = a.allocateExplicit(256);
            final ByteBuffer explicit = a.allocateExplicit(256);
            final ThreadCache tc = a.registry.current();
            final AllocatorStats before = a.stats();
            tc.busy = true; // as inside Refill, where help runs
            tc.runningGcCleaners = true;
            try {
                a.free(helped);
            } finally {
                tc.runningGcCleaners = false;
                tc.busy = false;
            }
            final AllocatorStats mid = a.stats();
            assertThat(mid.gcFrees()).as("GC frees").isEqualTo(before.gcFrees() + 1);
            assertThat(mid.explicitFrees()).as("explicit frees").isEqualTo(before.explicitFrees());
            a.free(explicit);
            final AllocatorStats after = a.stats();
            assertThat(after.explicitFrees()).as("explicit frees, the flag off").isEqualTo(before.explicitFrees() + 1);
            assertThat(after.gcFrees()).isEqualTo(mid.gcFrees());
        }
    }

    @Test
    void hitsAreAllocationsMinusMissesAndTheHitRateIsHitsOverAllocationsEverywhere() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().magazineRounds(4)
            .reapIntervalMillis(60_000).build())) {
            final List<ByteBuffer> l = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                l.add(a.allocateExplicit(256)); // the first takes the slow path, refills 8 (shared slabs) ...
            }
            l.forEach(a::free);
            for (int i = 0; i < 8; i++) {
                a.free(a.allocateExplicit(256)); // ... and these are hits: the freed objects wait in the magazines
            }
            final AllocatorStats s = a.stats();
            final CacheStats c = s.caches().get(a.classes.indexOf(256));
            assertThat(s.allocations()).isEqualTo(18);
            assertThat(c.allocations()).isEqualTo(18);
            assertThat(c.magazineMisses()).as("misses").isBetween(1L, 17L);
            assertThat(c.magazineHits()).isEqualTo(c.allocations() - c.magazineMisses());
            assertThat(s.magazineHits()).isEqualTo(s.allocations() - s.magazineMisses());
            assertThat(c.magazineHitRate()).isCloseTo((double) c.magazineHits() / c.allocations(), within(1e-12));
            assertThat(s.magazineHitRate()).isCloseTo((double) s.magazineHits() / s.allocations(), within(1e-12));
            assertThat(s.magazineHitRate()).as("one cache used: the same rate").isCloseTo(c.magazineHitRate(), within(1e-12));
        }
    }

    @Test
    void aFailedSlowPathCountsNoMissAndNoAllocation() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults(), (capacity, address, hook) -> {
            throw new OutOfMemoryError("injected: the buffer object cannot be built");
        })) {
            assertThat(a.tryAllocate(256)).as("the JDK serves it").isNull();
            final AllocatorStats s = a.stats();
            assertThat(s.allocations()).isZero();
            assertThat(s.magazineMisses()).isZero();
            assertThat(s.magazineHitRate()).isZero();
            assertThat(s.allocationFailures()).isEqualTo(1);
        }
    }

    @Test
    void gcFreesAreTheFreesOfTheGcCleanerThreadAndExplicitFreesTheRest() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            TestSupport.invokeCleaner(a.allocate(100));
            a.free(a.allocateExplicit(100));
            a.allocate(100); // dropped: the JDK's cleaner thread releases it after GC
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                System.gc();
                return a.stats().frees() == 3;
            });
            final AllocatorStats s = a.stats();
            assertThat(s.gcFrees()).isEqualTo(1);
            assertThat(s.explicitFrees()).isEqualTo(2);
            assertThat(s.liveBuffers()).isZero();
        }
    }
}
