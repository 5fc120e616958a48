package io.kmem4j.benchmarks.programs;

import java.io.IOException;
import java.io.Writer;

/**
 * The load of one run of {@code benchmarks/run --netty} ({@link ServerRun}): a warm-up, then the measured
 * run, whose result the run reports; {@link Wrk} for the HTTP server, {@link GrpcLoad} for the gRPC server.
 * Output goes to the run's log.
 */
interface LoadGenerator extends AutoCloseable {
    /** Makes the load generator of one run. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param port the server's port
         * @param log  the run's log (shared with the server's output: write under its lock)
         * @return the generator, not yet started
         */
        LoadGenerator create(int port, Writer log);
    }

    /** Runs the warm-up; returns when the measured run may start. */
    void warmUp() throws IOException, InterruptedException;

    /** Runs the measured run to its end. */
    LoadResult measure() throws IOException, InterruptedException;

    /** @return why a measured run does not count ({@link LoadResult#clean()} false), in the generator's words */
    String problem(LoadResult r);

    /** Ends what is still running. */
    @Override
    default void close() throws IOException {
    }

    /** Writes a block of output to the run's log under its lock. */
    static void log(final Writer log, final String text) throws IOException {
        synchronized (log) {
            log.write(text);
            log.flush();
        }
    }
}
