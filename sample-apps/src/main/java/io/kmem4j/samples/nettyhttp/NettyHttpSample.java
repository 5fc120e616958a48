package io.kmem4j.samples.nettyhttp;

import io.kmem4j.samples.support.Hold;
import io.netty.buffer.ByteBufAllocator;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code netty-http} sample: a Netty HTTP/1.1 server serving generated bodies of several sizes
 * and a Netty load client over loopback that verifies every byte of every body. Netty takes its
 * buffers from its default allocator; {@code -Dio.netty.allocator.type=unpooled} (or {@code
 * pooled}, {@code adaptive}) chooses another. See {@link NettyContentServer} and {@link
 * NettyLoadClient}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * netty-http: requests=N connections=C bytes=B verified=true|false mismatches=M
 * netty-http: throughput requests/s=X.X MiB/s=X.XX elapsed_ms=T
 * </pre>
 *
 * and, with {@code --hold}, {@code netty-http: holding (close stdin to exit)}, after which the
 * process waits (server and client already shut down) until stdin reaches end of file or a line is
 * read. The allocator in use and progress go to stderr.
 *
 * <p>Threads: Netty's server and client I/O threads, and the calling thread, which waits, reports
 * and holds. Exit code 0 if every body matched, 1 otherwise or on error.
 */
@Command(
        name = "netty-http",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Runs a Netty HTTP server and a Netty load client over loopback and verifies"
                + " every response body.")
public final class NettyHttpSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--requests", defaultValue = "10000", paramLabel = "N",
            description = "Total requests, split across the connections.")
    private int requests;

    @Option(names = "--connections", defaultValue = "4", paramLabel = "C",
            description = "Client keep-alive connections, one request in flight each.")
    private int connections;

    @Option(names = "--server-threads", defaultValue = "2", paramLabel = "THREADS",
            description = "Server I/O threads.")
    private int serverThreads;

    @Option(names = "--client-threads", defaultValue = "2", paramLabel = "THREADS",
            description = "Client I/O threads.")
    private int clientThreads;

    @Option(names = "--seed", defaultValue = "42", description = "Seed for the requested resources.")
    private long seed;

    @Mixin
    private Hold hold = new Hold();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        err.printf("netty-http: allocator %s%n", ByteBufAllocator.DEFAULT);
        err.flush();

        NettyLoadClient.Result result;
        long elapsedNanos;
        try (NettyContentServer server =
                NettyContentServer.start(InetAddress.getByName("127.0.0.1"), serverThreads)) {
            NettyLoadClient client = new NettyLoadClient(server.address(), connections, requests,
                    clientThreads, seed);
            long start = System.nanoTime();
            result = client.run(done -> {
                err.printf("netty-http: progress %d/%d requests%n", done, requests);
                err.flush();
            });
            elapsedNanos = System.nanoTime() - start;
        }

        boolean verified = result.requests() == requests && result.mismatches() == 0;
        double seconds = Math.max(elapsedNanos, 1) / 1e9;
        out.printf(Locale.ROOT,
                "netty-http: requests=%d connections=%d bytes=%d verified=%b mismatches=%d%n",
                result.requests(), connections, result.bytes(), verified, result.mismatches());
        out.printf(Locale.ROOT,
                "netty-http: throughput requests/s=%.1f MiB/s=%.2f elapsed_ms=%d%n",
                result.requests() / seconds, result.bytes() / seconds / (1 << 20),
                elapsedNanos / 1_000_000);
        out.flush();

        hold.ifRequested("netty-http", out);
        return verified ? 0 : 1;
    }

    private void validateOptions() {
        if (requests < 0) {
            throw usageError("--requests must not be negative");
        }
        if (connections < 1 || serverThreads < 1 || clientThreads < 1) {
            throw usageError("--connections, --server-threads and --client-threads must be at"
                    + " least 1");
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
