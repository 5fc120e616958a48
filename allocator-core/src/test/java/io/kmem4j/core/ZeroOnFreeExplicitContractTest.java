package io.kmem4j.core;

/** The explicit flavour when memory is zeroed on release instead of on allocation. */
class ZeroOnFreeExplicitContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().zeroOnFree(true).build();
    }

    @Override
    Flavour flavour() {
        return Flavour.EXPLICIT;
    }
}
