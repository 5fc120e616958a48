package io.kmem4j.samples.dropper;

import io.kmem4j.samples.support.Hold;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code dropper} sample: code that never frees its direct buffers, as most code using
 * {@code allocateDirect} does. Each worker keeps a ring of recent messages, each in a direct buffer
 * of its own, and replaces a random one per message: the old buffer is dropped, and only GC (and
 * the JDK cleaner it triggers) gives its memory back. Under {@code -XX:MaxDirectMemorySize} the
 * dropped buffers fill the limit between collections, so allocation meets the limit again and
 * again. Every message's buffer is checked when it is replaced (its stamp and checksum).
 *
 * <p>Output on stdout:
 *
 * <pre>
 * dropper: messages=N threads=T size=S slots=R verified=true|false mismatches=M
 * dropper: throughput messages/s=X.X elapsed_ms=T
 * </pre>
 *
 * and, with {@code --hold}, {@code dropper: holding (close stdin to exit)}. An
 * {@code OutOfMemoryError} ends the run with exit code 1 (the JDK alone completes this run).
 *
 * <p>Threads: the worker threads and the calling thread, which waits, reports and holds. Exit code
 * 0 if every buffer checked was intact.
 */
@Command(
        name = "dropper",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Keeps rings of recent messages in direct buffers and drops the replaced ones,"
                + " never freeing a buffer: only GC gives their memory back.")
public final class DropperSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--threads", defaultValue = "1", paramLabel = "T", description = "Worker threads.")
    private int threads;

    @Option(names = "--messages", defaultValue = "2000000", paramLabel = "N",
            description = "Messages in all, split across the threads.")
    private int messages;

    @Option(names = "--size", defaultValue = "4096", paramLabel = "BYTES", description = "Bytes per message.")
    private int size;

    @Option(names = "--slots", defaultValue = "8192", paramLabel = "R",
            description = "Messages each thread keeps (its live set).")
    private int slots;

    @Option(names = "--seed", defaultValue = "3", description = "Seed for the slots replaced.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    @Override
    public Integer call() throws Exception {
        if (threads < 1 || messages < 0 || slots < 1) {
            throw new ParameterException(spec.commandLine(),
                    "--threads and --slots must be at least 1, --messages not negative");
        }
        if (size < 16) {
            throw new ParameterException(spec.commandLine(), "--size must be at least 16");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        AtomicLong mismatches = new AtomicLong();
        AtomicLong done = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        int perThread = messages / threads;
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            final long threadSeed = seed * 0x9E3779B97F4A7C15L + t + 1;
            final int count = t == 0 ? messages - perThread * (threads - 1) : perThread;
            Thread w = new Thread(() -> {
                try {
                    mismatches.addAndGet(run(threadSeed, count, done));
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "dropper-" + t);
            workers.add(w);
            w.start();
        }
        long nextReport = System.nanoTime() + 1_000_000_000L;
        for (Thread w : workers) {
            while (w.isAlive()) {
                w.join(200);
                if (System.nanoTime() - nextReport > 0) {
                    err.printf("dropper: progress %d/%d messages%n", done.get(), messages);
                    err.flush();
                    nextReport += 1_000_000_000L;
                }
            }
        }
        long elapsedNanos = System.nanoTime() - start;
        for (Throwable f : failures) {
            err.println("dropper: worker failed: " + f);
        }
        boolean verified = failures.isEmpty() && mismatches.get() == 0 && done.get() == messages;
        out.printf(Locale.ROOT, "dropper: messages=%d threads=%d size=%d slots=%d verified=%b mismatches=%d%n",
                done.get(), threads, size, slots, verified, mismatches.get());
        out.printf(Locale.ROOT, "dropper: throughput messages/s=%.1f elapsed_ms=%d%n",
                done.get() / (Math.max(elapsedNanos, 1) / 1e9), elapsedNanos / 1_000_000);
        out.flush();
        hold.ifRequested("dropper", out);
        return verified ? 0 : 1;
    }

    /** One worker: fills its ring, then replaces random slots; returns the buffers found damaged. */
    private long run(long x, int count, AtomicLong done) {
        ByteBuffer[] ring = new ByteBuffer[slots];
        long[] stamps = new long[slots];
        long bad = 0;
        for (int s = 0; s < slots; s++) {
            ring[s] = message(s);
            stamps[s] = s;
        }
        for (int i = 0; i < count; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            int s = (int) ((x >>> 1) % slots);
            if (!intact(ring[s], stamps[s])) {
                bad++;
            }
            long stamp = slots + (long) i;
            ring[s] = message(stamp); // the old buffer is dropped here: only GC frees it
            stamps[s] = stamp;
            if ((i & 1023) == 1023) {
                done.addAndGet(1024);
            }
        }
        done.addAndGet(count & 1023);
        return bad;
    }

    /** A message: its stamp at both ends, zeros between (a new direct buffer is all zeros). */
    private ByteBuffer message(long stamp) {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        b.putLong(0, stamp);
        b.putLong(size - 8, ~stamp);
        return b;
    }

    private boolean intact(ByteBuffer b, long stamp) {
        return b.capacity() == size && b.getLong(0) == stamp && b.getLong(size - 8) == ~stamp
                && (size < 24 || b.get(size / 2) == 0);
    }
}
