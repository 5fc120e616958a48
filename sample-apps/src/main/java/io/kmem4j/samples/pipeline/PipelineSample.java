package io.kmem4j.samples.pipeline;

import io.kmem4j.samples.support.Hold;
import io.kmem4j.samples.support.Rounds;
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
 * The {@code pipeline} sample: producer threads allocate direct buffers and fill them, bounded
 * queues hand them to consumer threads, which verify every byte and release them — mostly
 * explicitly through the JDK's cleaner, sometimes by dropping them. Every buffer is thus released
 * on another thread than the one that allocated it. See {@link Pipeline}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * pipeline: items=N producers=P consumers=C bytes=B verified=true|false corrupt=K freed=F dropped=D
 * pipeline: throughput items/s=X.X MiB/s=X.XX elapsed_ms=T
 * pipeline: rounds=R duration_s=S            (only with --duration)
 * </pre>
 *
 * With {@code --duration S} a new pipeline (new threads and queues) runs again until S seconds
 * have passed; the figures are totals over the rounds.
 *
 * and, with {@code --hold}, {@code pipeline: holding (close stdin to exit)}, after which the process
 * waits (all buffers already released or dropped) until stdin reaches end of file or a line is
 * read. Progress goes to stderr every two seconds.
 *
 * <p>Threads: the producers and consumers, and the calling thread, which waits, reports and holds.
 * Exit code 0 if every item arrived intact, 1 otherwise or on error.
 */
@Command(
        name = "pipeline",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Producers fill direct buffers, consumers verify and release them.")
public final class PipelineSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--producers", defaultValue = "2", paramLabel = "P",
            description = "Producer threads.")
    private int producers;

    @Option(names = "--consumers", defaultValue = "2", paramLabel = "C",
            description = "Consumer threads, one bounded queue each.")
    private int consumers;

    @Option(names = "--items", defaultValue = "200000", paramLabel = "N",
            description = "Total buffers, split across the producers.")
    private int items;

    @Option(names = "--min-size", defaultValue = "256", paramLabel = "BYTES",
            description = "Smallest buffer.")
    private int minSize;

    @Option(names = "--max-size", defaultValue = "16384", paramLabel = "BYTES",
            description = "Largest buffer.")
    private int maxSize;

    @Option(names = "--queue-capacity", defaultValue = "256", paramLabel = "ITEMS",
            description = "Capacity of each consumer's queue.")
    private int queueCapacity;

    @Option(names = "--drop-every", defaultValue = "4", paramLabel = "K",
            description = "Every K-th item of a producer is dropped instead of freed (0: never).")
    private int dropEvery;

    @Option(names = "--seed", defaultValue = "3", description = "Seed for the buffer sizes.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    /** {@code --duration}: a new pipeline (new threads and queues) every round. */
    @Mixin
    private Rounds rounds = new Rounds();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        long start = System.nanoTime();
        Pipeline.Result result = rounds.run(round -> {
            Pipeline pipeline = new Pipeline(producers, consumers, items, minSize, maxSize,
                    queueCapacity, seed, dropEvery);
            return pipeline.run(() -> {
                err.printf("pipeline: progress %d/%d items%s%n", pipeline.consumed(), items,
                        rounds.seconds() > 0 ? " (round " + (round + 1) + ")" : "");
                err.flush();
            });
        }, Pipeline.Result::plus);
        long elapsedNanos = System.nanoTime() - start;

        boolean verified = result.items() == (long) items * rounds.completed() && result.corrupt() == 0;
        double seconds = Math.max(elapsedNanos, 1) / 1e9;
        out.printf(Locale.ROOT, "pipeline: items=%d producers=%d consumers=%d bytes=%d verified=%b"
                        + " corrupt=%d freed=%d dropped=%d%n",
                result.items(), producers, consumers, result.bytes(), verified, result.corrupt(),
                result.freed(), result.dropped());
        out.printf(Locale.ROOT, "pipeline: throughput items/s=%.1f MiB/s=%.2f elapsed_ms=%d%n",
                result.items() / seconds, result.bytes() / seconds / (1 << 20),
                elapsedNanos / 1_000_000);
        if (rounds.seconds() > 0) {
            out.printf(Locale.ROOT, "pipeline: rounds=%d duration_s=%d%n", rounds.completed(), rounds.seconds());
        }
        out.flush();

        hold.ifRequested("pipeline", out);
        return verified ? 0 : 1;
    }

    private void validateOptions() {
        if (producers < 1 || consumers < 1) {
            throw usageError("--producers and --consumers must be at least 1");
        }
        if (items < 0) {
            throw usageError("--items must not be negative");
        }
        if (minSize < 0 || minSize > maxSize) {
            throw usageError("sizes must satisfy 0 <= --min-size <= --max-size");
        }
        if (queueCapacity < 1) {
            throw usageError("--queue-capacity must be at least 1");
        }
        if (dropEvery < 0) {
            throw usageError("--drop-every must not be negative");
        }
        if (rounds.seconds() < 0) {
            throw usageError("--duration must not be negative");
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
