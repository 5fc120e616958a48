package io.kmem4j.core;

/** The contract when memory is zeroed on allocation instead of on release (zeroOnFree=false). */
class ZeroOnAllocationContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().zeroOnFree(false).magazineRounds(4).depotMagazines(1).build();
    }
}
