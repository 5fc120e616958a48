package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The JDK internals resolve on the test JDK, and the GC cleaner thread is told apart from every other. */
class JdkInternalsTest {

    @Test
    void everythingResolvesOnThisJdk() {
        assertThat(JdkInternals.failure()).isNull();
    }

    @Test
    void aTrackedBufferHasACleanerAndAnExplicitOneNone() {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            final ByteBuffer tracked = a.allocate(100);
            final ByteBuffer explicit = a.allocateExplicit(100);
            assertThat(JdkInternals.cleaner(tracked)).isNotNull();
            assertThat(JdkInternals.cleaner(explicit)).isNull();
            assertThat(JdkInternals.attachment(tracked)).isNull();
            assertThat(JdkInternals.attachment(tracked.slice())).isSameAs(tracked);
            a.free(explicit);
            a.free(tracked);
        }
    }

    @Test
    void exactlyOneLiveThreadIsTheGcCleanerThreadOnceGcHasCleanedABuffer() throws Exception {
        try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
            a.allocate(64); // dropped at once; on 26+ its registration starts BufferCleaner's thread
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                System.gc();
                return a.stats().gcFrees() == 1;
            });
        }
        final List<Thread> cleaners = Thread.getAllStackTraces().keySet().stream()
            .filter(JdkInternals::isGcCleanerThread).collect(Collectors.toList());
        assertThat(cleaners).as("the thread that ran the buffer's cleaner after GC").hasSize(1);
        assertThat(JdkInternals.isGcCleanerThread(Thread.currentThread())).isFalse();
        if (Runtime.version().feature() < 26) {
            assertThat(cleaners.get(0).getName()).isEqualTo("Reference Handler");
        }
    }
}
