package io.kmem4j.core;

/** The contract when memory is zeroed on release instead of on allocation. */
class ZeroOnFreeContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().zeroOnFree(true).magazineRounds(4).depotMagazines(1).build();
    }
}
