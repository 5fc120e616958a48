package io.kmem4j.samples.echo;

import io.kmem4j.samples.support.Hold;
import io.kmem4j.samples.support.Rounds;
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
 * The {@code echo} sample: a non-blocking NIO echo server and a multi-connection load client in
 * one process, talking over loopback; every echoed byte is verified.
 *
 * <p>This is deliberately an ordinary program. It allocates direct buffers with {@link
 * java.nio.ByteBuffer#allocateDirect} the way network servers commonly do: one long-lived buffer
 * per connection, one short-lived buffer per message (mostly freed eagerly through the JDK's
 * cleaner, sometimes just dropped), and reused buffers on the client side. See {@link EchoServer}
 * and {@link EchoClient}.
 *
 * <p>Output on stdout:
 *
 * <pre>
 * echo: messages=N connections=C bytes=B verified=true|false mismatches=M
 * echo: throughput messages/s=X.X MiB/s=X.XX elapsed_ms=T
 * echo: rounds=R duration_s=S                 (only with --duration)
 * </pre>
 *
 * With {@code --duration S} the client runs again, with new connections and threads each round,
 * until S seconds have passed; the figures are totals over the rounds.
 *
 * and, with {@code --hold}, {@code echo: holding (close stdin to exit)}, after which the server
 * stays up until stdin reaches end of file or a line is read. Progress goes to stderr every two
 * seconds.
 *
 * <p>Threads: the server's selector thread, one client thread per connection, and the calling
 * thread, which waits, reports and holds. Exit code 0 if every echo matched, 1 otherwise or on
 * error.
 */
@Command(
        name = "echo",
        mixinStandardHelpOptions = true,
        showDefaultValues = true,
        description = "Runs an NIO echo server and a load client over loopback and verifies every"
                + " echoed byte.")
public final class EchoSample implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--connections", defaultValue = "4", paramLabel = "C",
            description = "Client connections, one thread each.")
    private int connections;

    @Option(names = "--messages", defaultValue = "20000", paramLabel = "N",
            description = "Total messages, split across the connections.")
    private int messages;

    @Option(names = "--min-size", defaultValue = "64", paramLabel = "BYTES",
            description = "Smallest payload size.")
    private int minSize;

    @Option(names = "--max-size", defaultValue = "65536", paramLabel = "BYTES",
            description = "Largest payload size.")
    private int maxSize;

    @Option(names = "--seed", defaultValue = "42", description = "Seed for the payload sizes.")
    private long seed;

    /** {@code --hold}: the server keeps running while the process holds. */
    @Mixin
    private Hold hold = new Hold();

    /** {@code --duration}: new client connections every round, one server throughout. */
    @Mixin
    private Rounds rounds = new Rounds();

    @Override
    public Integer call() throws Exception {
        validateOptions();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (EchoServer server = EchoServer.start(InetAddress.getByName("127.0.0.1"))) {
            long start = System.nanoTime();
            EchoClient.Result result = rounds.run(round -> new EchoClient(server.address(), connections,
                    messages, minSize, maxSize, seed).run(done -> {
                        err.printf("echo: progress %d/%d messages%s%n", done, messages,
                                rounds.seconds() > 0 ? " (round " + (round + 1) + ")" : "");
                        err.flush();
                    }), EchoClient.Result::plus);
            long elapsedNanos = System.nanoTime() - start;

            boolean verified = result.messages() == (long) messages * rounds.completed()
                    && result.mismatches() == 0;
            double seconds = Math.max(elapsedNanos, 1) / 1e9;
            out.printf(Locale.ROOT,
                    "echo: messages=%d connections=%d bytes=%d verified=%b mismatches=%d%n",
                    result.messages(), connections, result.bytes(), verified, result.mismatches());
            out.printf(Locale.ROOT, "echo: throughput messages/s=%.1f MiB/s=%.2f elapsed_ms=%d%n",
                    result.messages() / seconds, result.bytes() / seconds / (1 << 20),
                    elapsedNanos / 1_000_000);
            if (rounds.seconds() > 0) {
                out.printf(Locale.ROOT, "echo: rounds=%d duration_s=%d%n", rounds.completed(), rounds.seconds());
            }
            out.flush();

            hold.ifRequested("echo", out);
            return verified ? 0 : 1;
        }
    }

    private void validateOptions() {
        if (connections < 1) {
            throw usageError("--connections must be at least 1");
        }
        if (messages < 0) {
            throw usageError("--messages must not be negative");
        }
        if (rounds.seconds() < 0) {
            throw usageError("--duration must not be negative");
        }
        if (minSize < 0 || minSize > maxSize || maxSize > EchoProtocol.MAX_PAYLOAD) {
            throw usageError("sizes must satisfy 0 <= --min-size <= --max-size <= "
                    + EchoProtocol.MAX_PAYLOAD);
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
