package io.kmem4j.agent.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.kmem4j.core.SlabAllocator;
import io.kmem4j.core.SlabAllocatorConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** trimNativeHeap: the C heap is trimmed after enough chunks went back, once, and not where it cannot be. */
class NativeHeapTrimTest {
    /** No background reaper pass: the passes counted are the test's own. */
    private final SlabAllocator allocator = new SlabAllocator(SlabAllocatorConfig.builder().reapIntervalMillis(60_000).build());

    @AfterEach
    void close() {
        allocator.close();
    }

    /** Takes and frees {@code mib} MiB of 64 KiB blocks on a thread that then ends, and trims: its chunks go back. */
    private void releaseChunks(final int mib) throws InterruptedException {
        final Thread t = new Thread(() -> {
            final List<ByteBuffer> held = new ArrayList<>();
            for (int i = 0; i < mib * 16; i++) {
                held.add(allocator.allocateExplicit(65536));
            }
            held.forEach(allocator::free);
        });
        t.start();
        t.join();
        allocator.trim(); // adopts the ended thread's cache and releases the empty chunks
    }

    @Test
    void aTrimFollowsTheReleaseOfEnoughChunksOnceAndNotBefore() throws InterruptedException {
        final AtomicInteger trims = new AtomicInteger();
        final NativeHeapTrim trim = new NativeHeapTrim(() -> "trimmed " + trims.incrementAndGet());
        trim.watch(allocator);
        allocator.trim();
        assertThat(trims.get()).as("nothing released yet").isZero();
        releaseChunks(16);
        final long released = allocator.stats().chunksReleased() * allocator.config().chunkSizeBytes();
        assertThat(released).as("control: chunks went back").isGreaterThanOrEqualTo(NativeHeapTrim.MIN_RELEASED_BYTES);
        allocator.trim(); // the task runs at the start of a pass: it sees the previous pass's releases
        assertThat(trims.get()).isEqualTo(1);
        assertThat(trim.trims.sum()).isEqualTo(1);
        allocator.trim();
        assertThat(trims.get()).as("no more released since: no second trim").isEqualTo(1);
    }

    @Test
    void whereTheCommandIsMissingTrimmingStopsQuietly() throws InterruptedException {
        final AtomicInteger tries = new AtomicInteger();
        final NativeHeapTrim trim = new NativeHeapTrim(() -> {
            tries.incrementAndGet();
            throw new javax.management.ReflectionException(new NoSuchMethodException("systemTrimNativeHeap"));
        });
        trim.watch(allocator);
        releaseChunks(16);
        allocator.trim();
        assertThat(tries.get()).isEqualTo(1);
        releaseChunks(16);
        allocator.trim();
        assertThat(tries.get()).as("not tried again").isEqualTo(1);
        assertThat(trim.trims.sum()).isZero();
        assertThat(allocator.stats().hookFailures()).as("nothing thrown to the reaper").isZero();
    }

    @Test
    void theJvmsOwnCommandIsThereAndTrims() throws InterruptedException {
        final NativeHeapTrim trim = new NativeHeapTrim(null); // System.trim_native_heap through the bean
        trim.watch(allocator);
        releaseChunks(16);
        allocator.trim();
        assertThat(trim.trims.sum()).as("System.trim_native_heap on JDK %s (Linux, glibc)",
            System.getProperty("java.version")).isEqualTo(1);
    }
}
