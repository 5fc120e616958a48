package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * Address order (against the scattering of LIFO freelists): after random frees, a LIFO free list hands out scattered
 * addresses, so nodes allocated one after another (a list, a hash chain) end up far apart. kmem4j
 * refills from slab bitmaps lowest address first and sorts magazines coming back for allocation, so
 * consecutive allocations after churn still ascend. The same churn is replayed on a LIFO free list
 * as the baseline; both figures are printed.
 */
class AddressOrderTest {
    private static final int NODES = 20_000;
    private static final int SIZE = 256;

    /** Share of consecutive pairs with an ascending address, 0..1. */
    static double ascendingShare(final long[] addresses) {
        int up = 0;
        for (int i = 1; i < addresses.length; i++) {
            if (addresses[i] > addresses[i - 1]) {
                up++;
            }
        }
        return (double) up / (addresses.length - 1);
    }

    @Test
    void consecutiveAllocationsAfterRandomChurnAscendUnlikeALifoFreeList() {
        final SplittableRandom rnd = new SplittableRandom(1);
        final int[] victims = rnd.ints(0, NODES).distinct().limit(NODES / 2).toArray();

        final double kmem4j;
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final List<ByteBuffer> nodes = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                nodes.add(a.allocateExplicit(SIZE));
            }
            for (final int v : victims) {
                a.free(nodes.set(v, null));
            }
            final long[] reinserted = new long[NODES / 2];
            for (int i = 0; i < reinserted.length; i++) {
                final ByteBuffer b = a.allocateExplicit(SIZE);
                reinserted[i] = TestSupport.address(b);
                nodes.add(b);
            }
            kmem4j = ascendingShare(reinserted);
            nodes.stream().filter(b -> b != null).forEach(a::free);
        }

        // the baseline: the same churn on a LIFO free list over the same address layout
        final long[] lifo = new long[NODES];
        int top = 0;
        final long[] node = new long[NODES];
        for (int i = 0; i < NODES; i++) {
            node[i] = 4096L + (long) i * SIZE; // fresh memory handed out in order, as a bump allocator
        }
        for (final int v : victims) {
            lifo[top++] = node[v];
        }
        final long[] reinsertedLifo = new long[NODES / 2];
        for (int i = 0; i < reinsertedLifo.length; i++) {
            reinsertedLifo[i] = lifo[--top];
        }
        final double baseline = ascendingShare(reinsertedLifo);

        System.out.printf("[address-order] after freeing a random half of %d nodes of %d B and re-inserting: "
            + "kmem4j %.3f, LIFO free list %.3f (share of consecutive allocations at ascending addresses)%n",
            NODES, SIZE, kmem4j, baseline);
        assertThat(baseline).as("LIFO baseline").isBetween(0.4, 0.6);
        assertThat(kmem4j).as("kmem4j address-order score after churn").isGreaterThan(0.9);
    }
}
