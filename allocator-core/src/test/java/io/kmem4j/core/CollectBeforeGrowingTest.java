package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thread about to grow past the mark asks for a collection first, in a program that drops buffers to
 * GC ({@link CollectBeforeGrowing}); never in one that releases its buffers, never with
 * {@code collectAboveBytes=0}, never while the Java heap in use is larger than the direct bytes in use;
 * and a live set that really grows pays one collection per doubling. Real collections, the JDK's own
 * cleaner thread.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CollectBeforeGrowingTest {
    private static final int SIZE = 64 << 10;
    private static final long MARK = 32L << 20;

    private static SlabAllocator allocator(final long collectAboveBytes) {
        return new SlabAllocator(SlabAllocatorConfig.builder().collectAboveBytes(collectAboveBytes).build());
    }

    /** Drops one buffer and collects until GC has freed it: the allocator has seen the program drop buffers. */
    private static void seenDropping(final SlabAllocator a) {
        a.allocate(SIZE);
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
            System.gc();
            return a.stats().gcFrees() > 0;
        });
    }

    /** The JFR event too: the bytes in use before and after, the reserve, the Java heap in use. */
    @Test
    void aProgramThatDropsBuffersCollectsBeforeGrowingPastTheMarkAndReusesWhatCameBack(@TempDir final Path dir)
        throws Exception {
        final Path file = dir.resolve("collect.jfr");
        final long mark = 2 * MARK;
        try (Recording r = new Recording(); SlabAllocator a = allocator(mark)) {
            r.enable("io.kmem4j.CollectBeforeGrowing").withThreshold(Duration.ZERO);
            r.start();
            seenDropping(a);
            System.gc(); // the Java heap in use is then the test JVM's live set, far below the mark
            long reservedAtFirst = -1;
            final long gcFreesBefore = a.stats().gcFrees();
            for (int i = 0; i < 2 * (int) (mark / SIZE); i++) {
                final ByteBuffer dropped = a.allocate(SIZE);
                assertThat(dropped).isNotNull();
                if (reservedAtFirst < 0 && a.collector.collections() > 0) {
                    reservedAtFirst = a.stats().bytesReserved();
                    assertThat(a.stats().gcFrees() - gcFreesBefore).as("the collection found buffers dropped so far").isPositive();
                }
            }
            final AllocatorStats s = a.stats();
            assertThat(s.collectionsBeforeGrowing()).as("a collection before growing past %d bytes: %s", mark, s).isPositive();
            assertThat(reservedAtFirst).as("reserved when the first collection had run: the request it ran for was served"
                + " from what came back or one chunk, within the mark").isBetween(1L, mark);
            r.stop();
            r.dump(file);
        }
        final List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
            .filter(e -> e.getEventType().getName().equals("io.kmem4j.CollectBeforeGrowing")).collect(Collectors.toList());
        assertThat(events).isNotEmpty();
        final RecordedEvent first = events.get(0);
        assertThat(first.getLong("bytesInUseBefore")).isGreaterThan(first.getLong("bytesInUseAfter"));
        assertThat(first.getLong("reservedBytes")).isPositive();
        assertThat(first.getLong("heapInUse")).isBetween(1L, first.getLong("bytesInUseBefore"));
    }

    /** Buffers released explicitly, none dropped: one collection finds that out, and none runs after it. */
    @Test
    void buffersReleasedExplicitlyCauseOneCollectionAtMost() {
        try (SlabAllocator a = allocator(MARK)) {
            System.gc();
            final List<ByteBuffer> live = new ArrayList<>();
            for (int i = 0; i < 4 * (int) (MARK / SIZE); i++) {
                live.add(a.allocate(SIZE));
            }
            for (final ByteBuffer b : live) {
                a.free(b);
            }
            final AllocatorStats s = a.stats();
            assertThat(s.bytesReserved()).as("grew past the mark, then past twice what was in use").isGreaterThan(3 * MARK);
            assertThat(s.gcFrees()).isZero();
            assertThat(s.collectionsBeforeGrowing()).as("the first found no dropped buffer: none after it").isEqualTo(1);
        }
    }

    @Test
    void zeroTurnsItOff() {
        try (SlabAllocator a = allocator(0)) {
            seenDropping(a);
            for (int i = 0; i < 3 * (int) (MARK / SIZE); i++) {
                assertThat(a.allocate(SIZE)).isNotNull();
            }
            assertThat(a.stats().collectionsBeforeGrowing()).isZero();
        }
    }

    @Test
    void aJavaHeapLargerThanTheBuffersInUseIsNotCollectedForThem() {
        try (SlabAllocator a = allocator(MARK)) {
            seenDropping(a);
            final long[] heap = new long[(int) (4 * MARK / Long.BYTES)]; // 128 MiB of live Java heap
            heap[heap.length - 1] = 1;
            for (int i = 0; i < 3 * (int) (MARK / SIZE); i++) { // 96 MiB of buffers dropped
                assertThat(a.allocate(SIZE)).isNotNull();
            }
            assertThat(a.stats().collectionsBeforeGrowing())
                .as("marking %d bytes of heap to give back at most %d bytes of buffers", heap.length * 8L, 3 * MARK).isZero();
            assertThat(heap[heap.length - 1]).isEqualTo(1); // kept live to here
        }
    }

    /** Buffers that stay live: the mark doubles with what survived, so the collections grow as the log of the live set. */
    @Test
    void aLiveSetThatGrowsPaysOneCollectionPerDoubling() {
        try (SlabAllocator a = allocator(MARK)) {
            seenDropping(a);
            System.gc();
            final List<ByteBuffer> live = new ArrayList<>();
            final int n = 8 * (int) (MARK / SIZE); // 256 MiB live: marks 32, 64, 128, 256 MiB at most
            for (int i = 0; i < n; i++) {
                live.add(a.allocate(SIZE));
            }
            final AllocatorStats s = a.stats();
            assertThat(s.bytesInUse()).isGreaterThanOrEqualTo((long) n * SIZE);
            assertThat(s.collectionsBeforeGrowing()).as("collections for a live set of %d bytes from a mark of %d: %s",
                (long) n * SIZE, MARK, s).isBetween(1L, 5L);
            assertThat(a.collector.markBytes()).as("the mark after a collection that found the buffers live")
                .isGreaterThanOrEqualTo(2 * MARK - 2 * SlabAllocatorConfig.defaults().chunkSizeBytes());
            for (final ByteBuffer b : live) {
                a.free(b);
            }
        }
    }
}
