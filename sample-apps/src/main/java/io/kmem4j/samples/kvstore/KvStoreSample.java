package io.kmem4j.samples.kvstore;

import io.kmem4j.samples.support.Hold;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code kvstore} sample: an in-memory key-value store whose values are direct buffers of
 * their own exact size, driven by several threads with a mix of gets, puts and deletes; every value
 * read is verified against its key and version. Replaced and deleted values are released at once,
 * mostly explicitly through the JDK's cleaner, sometimes by dropping them. See {@link KvStore} and
 * {@link KvWorkload}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * kvstore: ops=N threads=T keys=K gets=G puts=P deletes=D verified=true|false mismatches=M
 * kvstore: throughput ops/s=X.X elapsed_ms=T
 * </pre>
 *
 * and, with {@code --hold}, {@code kvstore: holding (close stdin to exit)}, after which the process
 * waits (the store already emptied and every value released or dropped) until stdin reaches end of
 * file or a line is read. Progress, and the hits and releases (which depend on how the threads
 * interleave), go to stderr.
 *
 * <p>Threads: the worker threads and the calling thread, which loads the store, waits, reports and
 * holds. Exit code 0 if every value read was intact, 1 otherwise or on error.
 */
@Command(
        name = "kvstore",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Runs a get/put/delete workload on a key-value store whose values are direct"
                + " buffers, verifying every value read.")
public final class KvStoreSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--threads", defaultValue = "4", paramLabel = "T",
            description = "Worker threads.")
    private int threads;

    @Option(names = "--ops", defaultValue = "1000000", paramLabel = "N",
            description = "Total operations, split across the threads.")
    private int ops;

    @Option(names = "--keys", defaultValue = "50000", paramLabel = "K", description = "Distinct keys.")
    private int keys;

    @Option(names = "--min-size", defaultValue = "24", paramLabel = "BYTES",
            description = "Smallest value (at least " + KvStore.PAYLOAD + ").")
    private int minSize;

    @Option(names = "--max-size", defaultValue = "2048", paramLabel = "BYTES",
            description = "Largest value.")
    private int maxSize;

    @Option(names = "--get-percent", defaultValue = "70", paramLabel = "PERCENT",
            description = "Share of gets.")
    private int getPercent;

    @Option(names = "--put-percent", defaultValue = "20", paramLabel = "PERCENT",
            description = "Share of puts; deletes take the rest.")
    private int putPercent;

    @Option(names = "--seed", defaultValue = "2", description = "Seed for keys, operations and sizes.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        KvStore store = new KvStore(keys, minSize, maxSize, seed);
        KvWorkload workload =
                new KvWorkload(store, keys, threads, ops, getPercent, putPercent, seed);
        workload.load();
        long start = System.nanoTime();
        KvWorkload.Result r = workload.run(() -> {
            err.printf("kvstore: progress %d/%d ops%n", workload.done(), ops);
            err.flush();
        });
        long elapsedNanos = System.nanoTime() - start;
        long[] remaining = store.verifyAndClear();

        long mismatches = r.mismatches() + remaining[0];
        boolean verified = r.ops() == ops && mismatches == 0;
        double seconds = Math.max(elapsedNanos, 1) / 1e9;
        out.printf(Locale.ROOT, "kvstore: ops=%d threads=%d keys=%d gets=%d puts=%d deletes=%d"
                        + " verified=%b mismatches=%d%n",
                r.ops(), threads, keys, r.gets(), r.puts(), r.deletes(), verified, mismatches);
        out.printf(Locale.ROOT, "kvstore: throughput ops/s=%.1f elapsed_ms=%d%n",
                r.ops() / seconds, elapsedNanos / 1_000_000);
        out.flush();
        err.printf("kvstore: hits=%d of %d gets, %d values left at the end; released %d values"
                        + " (%d freed, %d dropped)%n",
                r.hits(), r.gets(), remaining[1], store.freed() + store.dropped(), store.freed(),
                store.dropped());
        err.flush();

        hold.ifRequested("kvstore", out);
        return verified ? 0 : 1;
    }

    private void validateOptions() {
        if (threads < 1) {
            throw usageError("--threads must be at least 1");
        }
        if (ops < 0) {
            throw usageError("--ops must not be negative");
        }
        if (keys < 1) {
            throw usageError("--keys must be at least 1");
        }
        if (minSize < KvStore.PAYLOAD || minSize > maxSize) {
            throw usageError("sizes must satisfy " + KvStore.PAYLOAD
                    + " <= --min-size <= --max-size");
        }
        if (getPercent < 0 || putPercent < 0 || getPercent + putPercent > 100) {
            throw usageError("--get-percent and --put-percent must be >= 0 and add up to <= 100");
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
