package io.kmem4j.core;

/** The contract with the default configuration. */
class DefaultConfigContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.defaults();
    }
}
