package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Case C2 at unit level, one honest account of direct memory: the JDK's {@code BufferPool} named
 * {@code direct} counts each chunk once (its bytes with the alignment pad, as one buffer) and never
 * the slab buffers carved from it, so the pool's figure moves exactly by {@code bytesReserved}; a
 * chunk given back leaves the pool again. (The forked form with the agent is {@code CasesIT#c2OneAccountOfDirectMemory}.)
 */
class DirectMemoryAccountTest {
    private static final BufferPoolMXBean DIRECT = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
        .stream().filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();

    @Test
    void c2TheJdkCountsEachChunkOnceAndNoSlabBufferAgain() throws Throwable {
        final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().retainedEmptyChunks(0)
            .reapIntervalMillis(60_000).build());
        try {
            final long usedBefore = DIRECT.getMemoryUsed();
            final long countBefore = DIRECT.getCount();
            // on a thread that ends: its magazines are adopted and trim() can give every chunk back
            TestSupport.onFreshThread("c2", () -> {
                final List<ByteBuffer> live = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    live.add(a.allocate(4096));
                }
                for (int i = 0; i < 100; i++) {
                    live.add(a.allocateExplicit(100 + i));
                }
                final AllocatorStats s = a.stats();
                assertThat(s.bytesInUse()).isEqualTo(1000L * 4096 + 100L * 100 + 4950);
                assertThat(s.chunks()).as("chunks for 4 MiB of 4 KiB objects and a few small ones").isBetween(1, 3);
                assertThat(s.bytesReserved()).as("whole chunks with their pads")
                    .isEqualTo(s.chunks() * (a.config().chunkSizeBytes() + 4096L));
                assertThat(DIRECT.getMemoryUsed() - usedBefore).as("the JDK's direct pool grew by the chunks alone")
                    .isEqualTo(s.bytesReserved());
                assertThat(DIRECT.getCount() - countBefore).as("one JDK 'buffer' per chunk, none per slab buffer")
                    .isEqualTo(s.chunks());
                for (int i = 0; i < live.size(); i++) {
                    if (i < 1000) {
                        TestSupport.invokeCleaner(live.get(i));
                    } else {
                        a.free(live.get(i));
                    }
                }
            });
            a.trim();
            assertThat(a.stats().bytesReserved()).isZero();
            assertThat(DIRECT.getMemoryUsed()).as("the chunks left the JDK's pool").isEqualTo(usedBefore);
            assertThat(DIRECT.getCount()).isEqualTo(countBefore);
        } finally {
            a.close();
        }
    }
}
