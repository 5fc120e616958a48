package io.kmem4j.it.apps;

import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An ordinary program (JDK 21+) that runs 20,000 virtual threads, each allocating a few direct
 * buffers, checking they are zero-filled, writing and verifying a pattern, handing one to the next
 * task and dropping the rest. Prints {@code virtual-threads: ok tasks=N bad=K}. With the argument
 * {@code release}, as a server that frees its buffers: 2,000 virtual threads each run 40 requests of 4
 * buffers (320,000 in all), releasing each with {@code Unsafe.invokeCleaner} when done with
 * it, and yielding in between, so they move between carriers. Compiled for 17, so the virtual-thread
 * executor is looked up reflectively.
 */
public final class VirtualThreadsApp {
    private VirtualThreadsApp() {
    }

    public static void main(final String[] args) throws Exception {
        final boolean release = args.length > 0 && args[0].equals("release");
        final int tasks = release ? 2_000 : 20_000;
        final int requests = release ? 40 : 1;
        final ExecutorService executor =
            (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        final AtomicLong bad = new AtomicLong();
        final java.util.concurrent.atomic.AtomicReference<ByteBuffer> handOff = new java.util.concurrent.atomic.AtomicReference<>();
        for (int t = 0; t < tasks; t++) {
            final int task = t;
            executor.submit(() -> {
                for (int r = 0; r < requests; r++) {
                for (int k = 0; k < 4; k++) {
                    final int size = 64 + ((task * requests + r) * 31 + k * 977) % 8000;
                    final ByteBuffer b = ByteBuffer.allocateDirect(size);
                    for (int i = 0; i < size; i++) {
                        if (b.get(i) != 0) {
                            bad.incrementAndGet();
                            break;
                        }
                    }
                    for (int i = 0; i < size; i++) {
                        b.put(i, (byte) (task + i));
                    }
                    Thread.yield(); // let the scheduler move this virtual thread to another carrier
                    for (int i = 0; i < size; i++) {
                        if (b.get(i) != (byte) (task + i)) {
                            bad.incrementAndGet();
                            break;
                        }
                    }
                    if (release) {
                        Cleaners.invokeCleaner(b);
                        continue;
                    }
                    final ByteBuffer previous = handOff.getAndSet(k == 0 ? b : null);
                    if (previous != null && previous.capacity() == 0) {
                        bad.incrementAndGet();
                    }
                }
                }
            });
        }
        executor.shutdown();
        if (!executor.awaitTermination(120, TimeUnit.SECONDS)) {
            System.out.println("virtual-threads: FAIL timeout");
            System.exit(1);
        }
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        System.out.println("virtual-threads: ok tasks=" + tasks * requests + " bad=" + bad.get());
    }
}
