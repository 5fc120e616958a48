package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The allocator's JFR events appear in a recording with the values that happened. */
class JfrEventsTest {
    @Test
    void chunkGrowReleaseFallbackAndBacklogAreRecorded(@TempDir final Path dir) throws Exception {
        final Path file = dir.resolve("kmem4j.jfr");
        try (Recording r = new Recording()) {
            for (final String name : List.of("io.kmem4j.ChunkGrow", "io.kmem4j.ChunkRelease", "io.kmem4j.Fallback",
                "io.kmem4j.RemoteFreeBacklog", "io.kmem4j.BudgetPressure")) {
                r.enable(name).withThreshold(Duration.ZERO);
            }
            r.start();
            final SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.builder().chunkSizeBytes(512 << 10)
                .retainedEmptyChunks(0).build());
            final Thread worker = new Thread(() -> {
                a.allocate(a.maxCapacity() + 1); // fallback
                List<ByteBuffer> dropped = new ArrayList<>();
                for (int i = 0; i < 3000; i++) {
                    dropped.add(a.allocate(64));
                }
                dropped = null;
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
                    System.gc();
                    return a.stats().gcFrees() == 3000;
                });
                final List<ByteBuffer> again = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    again.add(a.allocate(64)); // empties the magazines: a slow path absorbs the GC-driven frees
                }
                again.forEach(a::free);
            });
            worker.start();
            worker.join();
            a.close(); // adopts the worker's cache and trims: the chunks go back
            r.stop();
            r.dump(file);
        }
        final Map<String, List<RecordedEvent>> byName = RecordingFile.readAllEvents(file).stream()
            .collect(Collectors.groupingBy(e -> e.getEventType().getName()));
        assertThat(byName).containsKeys("io.kmem4j.ChunkGrow", "io.kmem4j.ChunkRelease", "io.kmem4j.Fallback",
            "io.kmem4j.RemoteFreeBacklog");
        assertThat(byName.get("io.kmem4j.ChunkGrow").get(0).getLong("bytes")).isEqualTo((512 << 10) + 4096);
        assertThat(byName.get("io.kmem4j.ChunkRelease")).hasSameSizeAs(byName.get("io.kmem4j.ChunkGrow"));
        final RecordedEvent fallback = byName.get("io.kmem4j.Fallback").get(0);
        assertThat(fallback.getInt("capacity")).isEqualTo(65537);
        assertThat(fallback.getString("reason")).isEqualTo("size outside the served range");
        assertThat(byName.get("io.kmem4j.RemoteFreeBacklog").get(0).getLong("frees")).isGreaterThan(Events.BACKLOG_THRESHOLD);
        assertThat(Files.size(file)).isPositive();
    }
}
