package io.kmem4j.core;

/** The explicit flavour when memory is zeroed on allocation instead of on release. */
class ZeroOnAllocationExplicitContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().zeroOnFree(false).build();
    }

    @Override
    Flavour flavour() {
        return Flavour.EXPLICIT;
    }
}
