package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Field case C1, memory an allocator caches: run with {@code -XX:MaxDirectMemorySize=64m}. A thread
 * allocates {@code n} buffers of {@code size} bytes (together close to the limit) and releases them
 * all ({@code invokeCleaner}); then the main thread asks for 1 MiB buffers (above kmem4j's largest size
 * class: the JDK's own path) until half the limit is live. A plain JDK completes; so must a JVM with
 * the agent, although the released memory sits in kmem4j's caches and the JDK's path reclaims only
 * with GC. Mode {@code same}: the main thread releases; mode {@code other}: a second thread allocates
 * and releases and stays alive (its own magazines hold part of what it released); mode
 * {@code dropped}: the main thread drops them without releasing, so only the collection the JDK's
 * path runs gives them back (to kmem4j's slabs: their chunks must not keep the room; trial finding).
 * Prints {@code c1c: ok large=32} or {@code c1c: oom after=K message=..}.
 */
public final class CachedThenLargeApp {
    private CachedThenLargeApp() {
    }

    public static void main(final String[] args) throws Exception {
        final String mode = args[0];
        final int n = 900;
        final int size = 60_000; // 54 MB in the 64 KiB class
        final CountDownLatch released = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final Runnable churn = () -> {
            final List<ByteBuffer> l = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                l.add(ByteBuffer.allocateDirect(size));
            }
            if (!"dropped".equals(mode)) {
                l.forEach(Cleaners::invokeCleaner);
            }
            l.clear();
            released.countDown();
        };
        Thread other = null;
        if ("same".equals(mode) || "dropped".equals(mode)) {
            churn.run();
        } else {
            other = new Thread(() -> {
                churn.run();
                try {
                    done.await(); // stays alive while main allocates: its magazines stay its own
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "c1c-churn");
            other.start();
            released.await();
        }
        final List<ByteBuffer> large = new ArrayList<>();
        try {
            for (int i = 0; i < 32; i++) {
                large.add(ByteBuffer.allocateDirect(1 << 20));
            }
            System.out.println("c1c: ok large=" + large.size());
        } catch (final OutOfMemoryError e) {
            System.out.println("c1c: oom after=" + large.size() + " message=" + e.getMessage());
        } finally {
            done.countDown();
            if (other != null) {
                other.join();
            }
        }
    }
}
