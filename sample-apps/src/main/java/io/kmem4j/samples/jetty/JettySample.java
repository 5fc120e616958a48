package io.kmem4j.samples.jetty;

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
 * The {@code jetty} sample: a Jetty 12 server (core Handler API) serving generated bodies of several
 * sizes, and Jetty's HttpClient over loopback verifying every byte of every body. See {@link
 * JettyContentServer} and {@link JettyLoadClient}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * jetty: requests=N connections=C bytes=B verified=true|false mismatches=M
 * jetty: throughput requests/s=X.X MiB/s=X.XX elapsed_ms=T
 * </pre>
 *
 * and, with {@code --hold}, {@code jetty: holding (close stdin to exit)}, after which the process
 * waits (server and client already stopped) until stdin reaches end of file or a line is read. The
 * server's buffer pool and progress go to stderr.
 *
 * <p>Threads: Jetty's server and client thread pools, one caller thread per connection, and the
 * calling thread, which waits, reports and holds. Exit code 0 if every body matched, 1 otherwise or
 * on error.
 */
@Command(
        name = "jetty",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Runs a Jetty 12 server and Jetty's HttpClient over loopback and verifies"
                + " every response body.")
public final class JettySample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--requests", defaultValue = "10000", paramLabel = "N",
            description = "Total requests, split across the connections.")
    private int requests;

    @Option(names = "--connections", defaultValue = "4", paramLabel = "C",
            description = "Concurrent callers, hence at most C connections.")
    private int connections;

    @Option(names = "--server-threads", defaultValue = "16", paramLabel = "THREADS",
            description = "Largest size of the server's thread pool.")
    private int serverThreads;

    @Option(names = "--seed", defaultValue = "42", description = "Seed for the requested resources.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        JettyLoadClient.Result result;
        long elapsedNanos;
        try (JettyContentServer server = JettyContentServer.start("127.0.0.1", serverThreads)) {
            err.printf("jetty: server buffer pool %s%n", server.byteBufferPool());
            err.flush();
            JettyLoadClient client =
                    new JettyLoadClient(server.address(), connections, requests, seed);
            long start = System.nanoTime();
            result = client.run(() -> {
                err.printf("jetty: progress %d/%d requests%n", client.completed(), requests);
                err.flush();
            });
            elapsedNanos = System.nanoTime() - start;
        }

        boolean verified = result.requests() == requests && result.mismatches() == 0;
        double seconds = Math.max(elapsedNanos, 1) / 1e9;
        out.printf(Locale.ROOT,
                "jetty: requests=%d connections=%d bytes=%d verified=%b mismatches=%d%n",
                result.requests(), connections, result.bytes(), verified, result.mismatches());
        out.printf(Locale.ROOT, "jetty: throughput requests/s=%.1f MiB/s=%.2f elapsed_ms=%d%n",
                result.requests() / seconds, result.bytes() / seconds / (1 << 20),
                elapsedNanos / 1_000_000);
        out.flush();

        hold.ifRequested("jetty", out);
        return verified ? 0 : 1;
    }

    private void validateOptions() {
        if (requests < 0) {
            throw usageError("--requests must not be negative");
        }
        if (connections < 1) {
            throw usageError("--connections must be at least 1");
        }
        if (serverThreads < 4) {
            throw usageError("--server-threads must be at least 4 (acceptor, selector, handlers)");
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
