package io.kmem4j.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code benchmarks/run --contention}: lock contention per operation for 1, 2, 4 and 8 threads,
 * one forked JVM per allocator ({@link ContentionBenchmark}), and a table of contended lock
 * acquisitions per million operations by kind (the JDK's cleaner list, kmem4j's own locks, other)
 * with the throughput of the same run. On a 2-core machine throughput stops growing at 2 threads,
 * but contention per operation is what 16 to 64 cores will see.
 */
@Command(name = "benchmarks/run --contention", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Counts contended locks per operation (JFR jdk.JavaMonitorEnter and jdk.ThreadPark) of a ring"
        + " of direct buffers, for several thread counts and allocators.")
public final class ContentionCommand implements Callable<Integer> {
    @Option(names = "--allocator", split = ",", description = "Allocators (default: ${DEFAULT-VALUE}).")
    List<String> allocators = List.of("jdk", "floor", "kmem4jTracked", "kmem4jExplicit", "kmem4jAgent");

    @Option(names = "--threads", split = ",", description = "Thread counts (default: ${DEFAULT-VALUE}).")
    List<Integer> threads = List.of(1, 2, 4, 8);

    @Option(names = "--size", description = "Buffer size, bytes (default: ${DEFAULT-VALUE}).")
    int size = 256;

    @Option(names = "--millis", description = "Recorded run per thread count, ms (default: ${DEFAULT-VALUE}).")
    long millis = 2000;

    @Option(names = "--agent", description = "The kmem4j agent jar (default: ${DEFAULT-VALUE}).")
    Path agent = Path.of("agent/target/kmem4j-agent.jar");

    @Option(names = "--java", description = "The java launcher of the forks (default: this JVM's).")
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");

    /** @param args command-line arguments ({@code --help}) */
    public static void main(final String[] args) {
        System.exit(new CommandLine(new ContentionCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        final List<Map<String, String>> rows = new ArrayList<>();
        for (final String a : allocators) {
            System.out.println("[contention] " + a + " ...");
            rows.addAll(fork(a));
        }
        System.out.println();
        System.out.println(table(rows, size));
        return 0;
    }

    private List<Map<String, String>> fork(final String allocator) throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>(List.of(java.toString(), Jvm.ADD_EXPORTS, Jvm.ADD_OPENS, Jvm.ADD_OPENS_REF, Jvm.XMS, Jvm.XMX,
            Jvm.MAX_DIRECT, Jvm.NETTY_NO_LEAK_DETECTION));
        if (Flavour.WITH_AGENT.contains(allocator)) {
            if (!Files.isRegularFile(agent)) {
                throw new IllegalArgumentException("allocator " + allocator + " needs the agent jar " + agent
                    + ": build it with ./mvnw -B -q -pl agent -am -DskipTests package");
            }
            cmd.add(Flavour.javaagent(agent, Flavour.agentOptions(allocator)));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ContentionBenchmark.class.getName(), allocator,
            Integer.toString(size), Long.toString(millis), String.join(",", threads.stream().map(String::valueOf).toList())));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final List<Map<String, String>> rows = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(ContentionBenchmark.LINE_PREFIX)) {
                    rows.add(parse(line.substring(ContentionBenchmark.LINE_PREFIX.length())));
                    System.out.println("[contention]   " + line);
                } else if (!line.startsWith("[kmem4j] INFO")) {
                    System.out.println("[contention]   (fork) " + line);
                }
            }
        }
        final int exit = p.waitFor();
        if (exit != 0 || rows.size() != threads.size()) {
            throw new IllegalStateException("allocator " + allocator + ": the fork exited " + exit + " with "
                + rows.size() + " of " + threads.size() + " results");
        }
        return rows;
    }

    private static Map<String, String> parse(final String kv) {
        final Map<String, String> m = new LinkedHashMap<>();
        for (final String part : kv.trim().split(" ")) {
            final int eq = part.indexOf('=');
            m.put(part.substring(0, eq), part.substring(eq + 1));
        }
        return m;
    }

    /** The markdown table: per allocator and thread count, throughput and contended acquisitions per million operations. */
    static String table(final List<Map<String, String>> rows, final int size) {
        final StringBuilder b = new StringBuilder();
        b.append("| allocator (").append(size).append(" B ring) | threads | Mops/s | vs 1 thread | JDK cleaner list")
            .append(" | kmem4j locks | other | contended per op |\n|---|--:|--:|--:|--:|--:|--:|--:|\n");
        final Map<String, Double> oneThread = new LinkedHashMap<>();
        for (final Map<String, String> r : rows) {
            final long ops = Long.parseLong(r.get("ops"));
            final double mops = ops / Double.parseDouble(r.get("seconds")) / 1e6;
            final int t = Integer.parseInt(r.get("threads"));
            if (t == 1) {
                oneThread.put(r.get("allocator"), mops);
            }
            final Double base = oneThread.get(r.get("allocator"));
            final long cleaner = Long.parseLong(r.get("jdkCleaner"));
            final long kmem4j = Long.parseLong(r.get("kmem4j"));
            final long other = Long.parseLong(r.get("other"));
            b.append(String.format(Locale.ROOT, "| %s | %d | %.2f | %s | %.1f | %.1f | %.1f | %.6f |%n", r.get("allocator"), t,
                mops, base == null ? "-" : String.format(Locale.ROOT, "%.2fx", mops / base), perMillion(cleaner, ops),
                perMillion(kmem4j, ops), perMillion(other, ops), (double) (cleaner + kmem4j + other) / ops));
        }
        b.append("\nJDK cleaner list, kmem4j locks, other: contended acquisitions (JFR jdk.JavaMonitorEnter +")
            .append(" jdk.ThreadPark, threshold 0) per million operations (one operation: release a slot and")
            .append(" allocate into it).\n");
        return b.toString();
    }

    private static double perMillion(final long events, final long ops) {
        return ops == 0 ? 0 : events * 1e6 / ops;
    }
}
