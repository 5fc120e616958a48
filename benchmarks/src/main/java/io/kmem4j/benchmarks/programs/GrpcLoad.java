package io.kmem4j.benchmarks.programs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.kmem4j.benchmarks.netty.GrpcLoadClient;

/**
 * The load generator of the gRPC server: {@code io.kmem4j.benchmarks.netty.GrpcLoadClient} in a JVM of its
 * own (the server's JDK, {@link #JVM_FLAGS}, no agent; pinned to a CPU like wrk), one process per run: it
 * warms up for the warm-up time and says so, the harness then starts its own measurements and answers
 * a line on the client's stdin, and the client measures for the measured time and prints its result line
 * ({@link #parse}). Its output goes to the run's log, each line prefixed {@code client: }.
 */
final class GrpcLoad implements LoadGenerator {
    static final String CLIENT_CLASS = "io.kmem4j.benchmarks.netty.GrpcLoadClient";
    /** The client JVM's flags: a fixed heap, the same in every run. */
    static final List<String> JVM_FLAGS = List.of("-Xms256m", "-Xmx256m");
    /** How long past its warm-up or measured time the client may take to say it is done. */
    private static final long GRACE_SECONDS = 60;
    /** Compile-time constants of the client: inlined, the client's class is not loaded here. */
    private static final String WARMED = GrpcLoadClient.WARMED;
    private static final String RESULT = GrpcLoadClient.RESULT;
    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S+)");
    private static final String END = "\u0000end";

    private final List<String> command;
    private final int warmupSeconds;
    private final int seconds;
    private final Writer log;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> last = new ArrayList<>();
    private Process client;

    private GrpcLoad(final List<String> command, final int warmupSeconds, final int seconds, final Writer log) {
        this.command = command;
        this.warmupSeconds = warmupSeconds;
        this.seconds = seconds;
        this.log = log;
    }

    /**
     * @param java      the {@code java} executable (the server's)
     * @param classPath the client's class path: benchmarks/target/classes, target/grpc/*, target/grpc-client/*
     * @param cpu       the CPU to pin the client to ({@code taskset -c}), or -1
     * @param size      {@code small} or {@code mixed}
     * @param channels  gRPC channels (HTTP/2 connections)
     * @param calls     outstanding calls over all channels
     * @param threads   the client's event-loop threads
     */
    static LoadGenerator.Factory load(final Path java, final String classPath, final int cpu, final String size,
                                      final int channels, final int calls, final int threads, final int warmupSeconds,
                                      final int seconds) {
        return (port, log) -> new GrpcLoad(command(java, classPath, cpu, port, size, channels, calls, threads,
            warmupSeconds, seconds), warmupSeconds, seconds, log);
    }

    /** @return the client's command line */
    static List<String> command(final Path java, final String classPath, final int cpu, final int port, final String size,
                                final int channels, final int calls, final int threads, final int warmupSeconds,
                                final int seconds) {
        final List<String> c = new ArrayList<>();
        if (cpu >= 0) {
            c.addAll(List.of("taskset", "-c", Integer.toString(cpu)));
        }
        c.add(java.toString());
        c.addAll(JVM_FLAGS);
        c.addAll(List.of("-cp", classPath, CLIENT_CLASS, "--port", Integer.toString(port), "--method", size,
            "--channels", Integer.toString(channels), "--calls", Integer.toString(calls), "--threads",
            Integer.toString(threads), "--warmup", Integer.toString(warmupSeconds), "--duration", Integer.toString(seconds)));
        return c;
    }

    @Override
    public void warmUp() throws IOException, InterruptedException {
        LoadGenerator.log(log, "---- grpc-load: " + String.join(" ", command) + "\n");
        client = new ProcessBuilder(command).redirectErrorStream(true).start();
        final Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                    LoadGenerator.log(log, "client: " + line + "\n");
                }
            } catch (final IOException e) {
                // the client is gone
            }
            lines.add(END);
        }, "grpc-load-output");
        pump.setDaemon(true);
        pump.start();
        await(WARMED, warmupSeconds + GRACE_SECONDS);
    }

    @Override
    public LoadResult measure() throws IOException, InterruptedException {
        final OutputStream go = client.getOutputStream();
        go.write("go\n".getBytes(StandardCharsets.US_ASCII));
        go.flush();
        return parse(await(RESULT, seconds + GRACE_SECONDS));
    }

    @Override
    public String problem(final LoadResult r) {
        return "grpc-load: " + r.requests() + " calls answered, " + r.errors() + " failed, " + r.badAnswers()
            + " answers of a wrong size";
    }

    /** Waits for the client's exit (it drains its calls), or ends it. */
    @Override
    public void close() throws IOException {
        if (client == null) {
            return;
        }
        client.getOutputStream().close();
        try {
            if (!client.waitFor(GRACE_SECONDS / 2, TimeUnit.SECONDS)) {
                client.destroyForcibly().waitFor();
            }
        } catch (final InterruptedException e) {
            client.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** @return the first line that starts with {@code prefix}; IOException when the client ends or times out first */
    private String await(final String prefix, final long timeoutSeconds) throws IOException, InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            final String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.equals(END)) {
                final boolean ended = line != null && client.waitFor(5, TimeUnit.SECONDS);
                throw new IOException("grpc-load " + (ended ? "exited " + client.exitValue() : "timed out after "
                    + timeoutSeconds + " s") + " before '" + prefix.strip() + "'; its last lines: " + String.join(" | ", last));
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            last.add(line);
            if (last.size() > 5) {
                last.remove(0);
            }
        }
    }

    /** @return the figures of the client's result line ({@code grpc-load: result requests=N seconds=S ...}) */
    static LoadResult parse(final String line) {
        if (!line.startsWith(RESULT)) {
            throw new IllegalArgumentException("not a grpc-load result line: " + line);
        }
        final java.util.Map<String, String> f = new java.util.HashMap<>();
        final Matcher m = FIELD.matcher(line.substring(RESULT.length()));
        while (m.find()) {
            f.put(m.group(1), m.group(2));
        }
        for (final String k : List.of("requests", "seconds", "rps", "p50_us", "p99_us", "errors", "bad")) {
            if (!f.containsKey(k)) {
                throw new IllegalArgumentException("grpc-load result line without " + k + ": " + line);
            }
        }
        return new LoadResult(Long.parseLong(f.get("requests")), Double.parseDouble(f.get("seconds")),
            Double.parseDouble(f.get("rps")), Double.parseDouble(f.get("p50_us")), Double.parseDouble(f.get("p99_us")),
            Long.parseLong(f.get("errors")), Long.parseLong(f.get("bad")));
    }
}
