package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** {@link SlabAllocator#onReap}: a layer above gives back what it keeps for ended threads; size-class lookups. */
class ReapTasksTest {
    @Test
    void aTaskRunsAtEachPassAndTrimAndAFailingOneIsCountedWithoutStoppingTheOthers() {
        // no background pass during the test: the counts below are of the passes it runs
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            final ByteBuffer[] kept = {allocator.allocateExplicit(4096)};
            final AtomicInteger runs = new AtomicInteger();
            allocator.onReap(() -> {
                throw new IllegalStateException("a failing layer");
            });
            allocator.onReap(() -> {
                runs.incrementAndGet();
                if (kept[0] != null) {
                    allocator.free(kept[0]); // what a layer above kept for an ended thread
                    kept[0] = null;
                }
            });
            allocator.trim();
            assertThat(runs.get()).isEqualTo(1);
            assertThat(allocator.stats().liveBuffers()).isZero();
            assertThat(allocator.stats().hookFailures()).isEqualTo(1);
            allocator.reap();
            assertThat(runs.get()).isEqualTo(2);
            assertThat(allocator.stats().hookFailures()).isEqualTo(2);
        }
    }

    /**
     * A slow task (the agent's C-heap trim: a first platform bean lookup reads files with temporary direct
     * buffers) runs in the reaper's and trim()'s passes, never in the pass an allocating thread runs to
     * relieve the budget: there it counted one fallback too many in field case C1c, 1 run in 4.
     */
    @Test
    void aTaskOffAllocationSkipsThePassesThatRelieveTheBudget() {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build())) {
            final AtomicInteger every = new AtomicInteger();
            final AtomicInteger offAllocation = new AtomicInteger();
            allocator.onReap(every::incrementAndGet);
            allocator.onReapOffAllocation(offAllocation::incrementAndGet);
            allocator.free(allocator.allocateExplicit(4096)); // this thread's cache, as an allocating thread's
            final ThreadCache tc = allocator.registry.current();
            tc.busy = true; // as the relieving allocation holds it
            try {
                allocator.reaper.relieve(tc, true); // a request above the largest class
                allocator.reaper.relieve(tc, false); // a refill at the limit
            } finally {
                tc.busy = false;
            }
            assertThat(every.get()).as("control: both relieving passes ran the tasks").isEqualTo(2);
            assertThat(offAllocation.get()).as("not on the allocating thread").isZero();
            allocator.trim();
            allocator.reap();
            assertThat(every.get()).isEqualTo(4);
            assertThat(offAllocation.get()).as("trim() and a reaper pass").isEqualTo(2);
            assertThatThrownBy(() -> allocator.onReapOffAllocation(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("task");
        }
    }

    @Test
    void aNullTaskIsRefused() {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            assertThatThrownBy(() -> allocator.onReap(null)).isInstanceOf(NullPointerException.class).hasMessage("task");
        }
    }

    @Test
    void sizeClassLookupsMatchTheClassesServed() {
        try (SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            assertThat(allocator.sizeClassBytes(allocator.sizeClassCount() - 1)).isEqualTo(allocator.maxCapacity());
            for (final int capacity : new int[] {1, 64, 65, 900, 1024, 1025, 65536}) {
                final int cls = allocator.sizeClassIndex(capacity);
                final int size = allocator.sizeClassBytes(cls);
                assertThat(size).as("class of %s", capacity).isGreaterThanOrEqualTo(capacity);
                assertThat(cls == 0 || allocator.sizeClassBytes(cls - 1) < capacity).as("smallest class for %s", capacity)
                    .isTrue();
            }
            assertThat(allocator.sizeClassBytes(allocator.sizeClassIndex(900))).isEqualTo(1024);
        }
    }
}
