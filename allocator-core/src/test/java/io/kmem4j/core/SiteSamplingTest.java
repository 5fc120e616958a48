package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Allocation-site sampling: outstanding bytes by call site, for leak hunting. */
class SiteSamplingTest {
    private final List<ByteBuffer> leakyCache = new ArrayList<>();

    private void leakyPath(final SlabAllocator a) {
        leakyCache.add(a.allocate(1000)); // kept: the "leak"
    }

    private void tidyPath(final SlabAllocator a) {
        a.free(a.allocateExplicit(500)); // allocated and freed at once
    }

    @Test
    void theSiteHoldingMemoryComesFirstAndFreedSitesDropToZero() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().siteSampleRate(4).build())) {
            for (int i = 0; i < 400; i++) {
                leakyPath(a);
            }
            for (int i = 0; i < 400; i++) {
                tidyPath(a);
            }
            final List<SiteStats> sites = a.outstandingBySite(10);
            assertThat(sites).isNotEmpty();
            final SiteStats top = sites.get(0);
            assertThat(top.site()).contains("SiteSamplingTest.leakyPath(SiteSamplingTest.java:");
            assertThat(top.sampledLiveBuffers()).isEqualTo(100); // one in 4 of 400
            assertThat(top.sampledLiveBytes()).isEqualTo(100_000);
            assertThat(top.estimatedLiveBytes()).isEqualTo(400_000);
            final SiteStats tidy = sites.stream().filter(s -> s.site().contains("tidyPath")).findFirst().orElseThrow();
            assertThat(tidy.sampledLiveBytes()).isZero();
            assertThat(tidy.sampledAllocations()).isEqualTo(100);
            leakyCache.forEach(TestSupport::invokeCleaner);
            assertThat(a.outstandingBySite(1).get(0).sampledLiveBytes()).isZero();
        }
    }

    @Test
    void offByDefault() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            leakyPath(a);
            assertThat(a.outstandingBySite(10)).isEmpty();
            leakyCache.forEach(TestSupport::invokeCleaner);
        }
    }
}
