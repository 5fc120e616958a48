package io.kmem4j.core;

/**
 * One allocation site's sampled figures ({@link SlabAllocator#outstandingBySite(int)}).
 *
 * @param site               the first caller outside the allocator, the agent and {@code java.nio}: {@code class.method(file:line)}
 * @param sampledLiveBuffers sampled buffers from this site not yet released
 * @param sampledLiveBytes   their capacities, bytes
 * @param sampledAllocations sampled allocations from this site since start
 * @param sampleRate         one allocation in this many is sampled: multiply for an estimate of the total
 */
public record SiteStats(String site, long sampledLiveBuffers, long sampledLiveBytes, long sampledAllocations,
                        int sampleRate) {
    /** @return {@code sampledLiveBytes * sampleRate}, an estimate of all live bytes from this site. */
    public long estimatedLiveBytes() {
        return sampledLiveBytes * sampleRate;
    }
}
