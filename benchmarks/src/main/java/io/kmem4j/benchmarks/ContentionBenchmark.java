package io.kmem4j.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Counts lock contention per operation, the figure that says what many cores will see when the
 * machine has two: {@code N} threads each run a ring of {@value #SLOTS} buffers (release a slot,
 * allocate into it) for a while, under a JFR recording of every contended monitor enter
 * ({@code jdk.JavaMonitorEnter}) and every park ({@code jdk.ThreadPark}, how a
 * {@code java.util.concurrent} lock waits), thresholds 0, with stack traces. Events of the ring
 * threads are put in one of three kinds by the frames that took the lock:
 * <ul>
 *   <li>{@code jdkCleaner}: the JDK's global cleaner list ({@code jdk.internal.ref.Cleaner} on 17-25,
 *       {@code java.nio.BufferCleaner}'s list on 26+), which every buffer with a cleaner in that list
 *       takes at birth and at release;</li>
 *   <li>{@code kmem4j}: any lock taken in kmem4j's code;</li>
 *   <li>{@code other}: the rest (JDK internals reached from the allocation, the ring's barrier).</li>
 * </ul>
 * A fork per allocator; {@code kmem4jAgent} and {@code kmem4jTracked} forks run with the agent
 * ({@link ContentionCommand}). Prints one line per thread count:
 * {@code contention: allocator=A size=S threads=N ops=.. seconds=.. jdkCleaner=.. kmem4j=.. other=..}.
 */
public final class ContentionBenchmark {
    static final int SLOTS = 64;
    static final String LINE_PREFIX = "contention: ";

    private ContentionBenchmark() {
    }

    /**
     * @param args allocator, buffer size (bytes), milliseconds per thread count, thread counts
     *             separated by commas (e.g. {@code kmem4jAgent 256 2000 1,2,4,8})
     */
    public static void main(final String[] args) throws Exception {
        final String allocator = args[0];
        final int size = Integer.parseInt(args[1]);
        final long millis = Long.parseLong(args[2]);
        for (final String t : args[3].split(",")) {
            final int threads = Integer.parseInt(t.trim());
            run(allocator, size, threads, millis / 4); // warm-up, not recorded
            System.out.println(run(allocator, size, threads, millis));
        }
        System.exit(0);
    }

    private static String run(final String allocator, final int size, final int threads, final long millis)
        throws Exception {
        try (Flavour f = Flavour.create(allocator, size, threads, SLOTS)) {
            final CyclicBarrier start = new CyclicBarrier(threads + 1);
            final CyclicBarrier filled = new CyclicBarrier(threads + 1);
            final AtomicLong ops = new AtomicLong();
            final List<Thread> workers = new ArrayList<>();
            final long[] deadline = new long[1];
            for (int i = 0; i < threads; i++) {
                final Thread w = new Thread(() -> {
                    try {
                        final Ring ring = f.newRing(SLOTS);
                        ring.fill(size);
                        filled.await();
                        start.await();
                        long n = 0;
                        final long end = deadline[0];
                        while (System.nanoTime() < end) {
                            for (int s = 0; s < SLOTS; s++) {
                                ring.replace(s, size);
                            }
                            n += SLOTS;
                        }
                        ops.addAndGet(n);
                        ring.releaseAll();
                    } catch (final Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, "contention-" + i);
                workers.add(w);
                w.start();
            }
            filled.await();
            final Path jfr = Files.createTempFile("kmem4j-contention", ".jfr");
            final long t0;
            try (Recording r = new Recording()) {
                r.enable("jdk.JavaMonitorEnter").withThreshold(Duration.ZERO).withStackTrace();
                r.enable("jdk.ThreadPark").withThreshold(Duration.ZERO).withStackTrace();
                r.start();
                t0 = System.nanoTime();
                deadline[0] = t0 + millis * 1_000_000L;
                start.await();
                for (final Thread w : workers) {
                    w.join();
                }
                r.stop();
                r.dump(jfr);
            }
            final double seconds = (System.nanoTime() - t0) / 1e9;
            long cleaner = 0;
            long kmem4j = 0;
            long other = 0;
            for (final RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
                if (e.getThread() == null || e.getThread().getJavaName() == null
                    || !e.getThread().getJavaName().startsWith("contention-")) {
                    continue;
                }
                switch (kind(e)) {
                    case 0:
                        cleaner++;
                        break;
                    case 1:
                        kmem4j++;
                        break;
                    default:
                        other++;
                }
            }
            Files.deleteIfExists(jfr);
            return String.format(Locale.ROOT, "%sallocator=%s size=%d threads=%d ops=%d seconds=%.2f jdkCleaner=%d kmem4j=%d other=%d",
                LINE_PREFIX, allocator, size, threads, ops.get(), seconds, cleaner, kmem4j, other);
        }
    }

    /** @return 0 the JDK's cleaner list, 1 kmem4j, 2 other (by the frames below the lock). */
    private static int kind(final RecordedEvent e) {
        if (e.getStackTrace() == null) {
            return 2;
        }
        final boolean park = e.getEventType().getName().equals("jdk.ThreadPark");
        for (final RecordedFrame f : e.getStackTrace().getFrames()) {
            final String type = f.getMethod().getType().getName();
            if (park && (type.startsWith("java.util.concurrent.locks.") || type.equals("jdk.internal.misc.Unsafe")
                || type.equals("java.lang.Thread") || type.startsWith("java.lang.VirtualThread"))) {
                continue; // the lock's own frames: look at who took it
            }
            if (type.equals("jdk.internal.ref.Cleaner") || type.startsWith("java.nio.BufferCleaner")) {
                return 0;
            }
            if (type.startsWith("io.kmem4j.")) {
                return 1;
            }
            if (!park) {
                return 2; // a monitor: the top frame took it
            }
            if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
                return 2;
            }
        }
        return 2;
    }
}
