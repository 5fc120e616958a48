package io.kmem4j.samples.hashchain;

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
 * The {@code hashchain} sample: a chained hash table whose nodes are small direct buffers (key,
 * value and the index of the next node), built, half deleted at random, refilled, verified, and
 * then traversed chain by chain — a pointer chase whose speed depends on where the nodes lie in
 * memory. See {@link ChainedTable} and {@link HashChainWorkload}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * hashchain: nodes=N buckets=B deleted=D verified=true|false mismatches=M
 * hashchain: throughput traversals/s=X.X nodes/s=X.X MiB/s=X.XX traversal_ms=T build_ms=T elapsed_ms=T
 * </pre>
 *
 * and, with {@code --hold}, {@code hashchain: holding (close stdin to exit)}, after which the
 * process waits (all nodes already released or dropped) until stdin reaches end of file or a line
 * is read. The build and traversal phases are reported on stderr.
 *
 * <p>Threads: everything runs on the calling thread. Exit code 0 if every node and traversal
 * checked out, 1 otherwise or on error.
 */
@Command(
        name = "hashchain",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Builds a hash table of off-heap nodes (one direct buffer each), churns half of"
                + " it and times full traversals of its chains.")
public final class HashChainSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--nodes", defaultValue = "200000", paramLabel = "N",
            description = "Nodes in the table.")
    private int nodes;

    @Option(names = "--load-factor", defaultValue = "4", paramLabel = "L",
            description = "Average chain length: buckets = nodes / L.")
    private int loadFactor;

    @Option(names = "--warmup-traversals", defaultValue = "10", paramLabel = "W",
            description = "Untimed traversals of all chains before the timed ones.")
    private int warmups;

    @Option(names = "--traversals", defaultValue = "20", paramLabel = "T",
            description = "Timed traversals of all chains.")
    private int traversals;

    @Option(names = "--min-size", defaultValue = "64", paramLabel = "BYTES",
            description = "Smallest node (at least " + ChainedTable.VALUE + ").")
    private int minSize;

    @Option(names = "--max-size", defaultValue = "256", paramLabel = "BYTES",
            description = "Largest node.")
    private int maxSize;

    @Option(names = "--seed", defaultValue = "1", description = "Seed for keys, sizes and deletions.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        int buckets = Math.max(1, nodes / loadFactor);
        err.printf("hashchain: building %d nodes in %d buckets, then %d + %d traversals%n",
                nodes, buckets, warmups, traversals);
        err.flush();
        long start = System.nanoTime();
        HashChainWorkload.Result r =
                new HashChainWorkload(nodes, buckets, warmups, traversals, minSize, maxSize, seed)
                        .run();
        long elapsedNanos = System.nanoTime() - start;

        boolean verified = r.mismatches() == 0;
        double traversalSeconds = Math.max(r.traversalNanos(), 1) / 1e9;
        out.printf(Locale.ROOT,
                "hashchain: nodes=%d buckets=%d deleted=%d verified=%b mismatches=%d%n",
                r.nodes(), r.buckets(), r.deleted(), verified, r.mismatches());
        out.printf(Locale.ROOT, "hashchain: throughput traversals/s=%.1f nodes/s=%.1f MiB/s=%.2f"
                        + " traversal_ms=%d build_ms=%d elapsed_ms=%d%n",
                traversals / traversalSeconds, (double) traversals * r.nodes() / traversalSeconds,
                (double) traversals * r.nodeBytes() / traversalSeconds / (1 << 20),
                r.traversalNanos() / 1_000_000, r.buildNanos() / 1_000_000,
                elapsedNanos / 1_000_000);
        out.flush();
        err.printf("hashchain: released %d nodes (%d freed, %d dropped)%n",
                r.freed() + r.dropped(), r.freed(), r.dropped());
        err.flush();

        hold.ifRequested("hashchain", out);
        return verified ? 0 : 1;
    }

    private void validateOptions() {
        if (nodes < 0) {
            throw usageError("--nodes must not be negative");
        }
        if (loadFactor < 1) {
            throw usageError("--load-factor must be at least 1");
        }
        if (traversals < 0 || warmups < 0) {
            throw usageError("--traversals and --warmup-traversals must not be negative");
        }
        if (minSize < ChainedTable.VALUE || minSize > maxSize) {
            throw usageError("sizes must satisfy " + ChainedTable.VALUE
                    + " <= --min-size <= --max-size");
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
