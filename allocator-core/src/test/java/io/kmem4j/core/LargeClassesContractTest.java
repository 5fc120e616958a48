package io.kmem4j.core;

/** The contract with size classes up to 1 MiB and a small magazine. */
class LargeClassesContractTest extends BufferContractTestBase {
    @Override
    SlabAllocatorConfig config() {
        return SlabAllocatorConfig.builder().maxSizeClassBytes(1 << 20).magazineRounds(4).build();
    }
}
