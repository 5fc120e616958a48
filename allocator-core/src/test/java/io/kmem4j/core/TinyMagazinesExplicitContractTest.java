package io.kmem4j.core;

/**
 * The explicit flavour with one-round magazines, no depot and no retained chunk: every allocation and
 * {@code free()} takes the slow paths, and freed blocks go back to their slabs (and chunks to the JDK)
 * soon after, which {@code free()}'s check of a no-cleaner root reads.
 */
class TinyMagazinesExplicitContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().magazineRounds(1).depotMagazines(0).retainedEmptyChunks(0)
            .chunkSizeBytes(1 << 20).build();
    }

    @Override
    Flavour flavour() {
        return Flavour.EXPLICIT;
    }
}
