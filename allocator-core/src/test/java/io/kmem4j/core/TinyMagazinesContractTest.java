package io.kmem4j.core;

/**
 * The contract with one-round magazines, no depot and no retained chunk: every allocation and free
 * takes the slow paths (depot exchange, slab refill, flush, chunk release).
 */
class TinyMagazinesContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().magazineRounds(1).depotMagazines(0).retainedEmptyChunks(0)
            .chunkSizeBytes(1 << 20).build();
    }
}
