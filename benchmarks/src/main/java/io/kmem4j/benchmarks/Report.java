package io.kmem4j.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the benchmarks with a profile, reads JMH's JSON results back and reports ns/op per
 * (benchmark, size, threads, allocator) with ratios against {@code jdk}, {@code nettyPooled} and
 * {@code floor} from the same run, plus the kmem4j statistics the forks print; writes
 * {@code BENCHMARKS.md}. Started by {@code benchmarks/run} from the repository root.
 *
 * <pre>
 * Report [--smoke | --quick | --full] [--include REGEX] [--size N,N] [--allocator A,B]
 *        [--out FILE | --no-md] [--results-dir DIR] [--from-json FILE[,FILE]] [--log FILE]
 * </pre>
 *
 * Exit status 0 when every selected benchmark produced a result, 1 when some failed, 2 on bad usage.
 */
public final class Report {
    private static final List<Class<?>> CLASSES = List.of(RingBenchmark.class, ProducerConsumerBenchmark.class);
    private static final List<String> BASELINES = List.of("jdk", "nettyPooled", "floor");

    /** A run profile: JMH iteration counts and times. */
    enum Profile {
        SMOKE(1, 200, 1, 300, 1, "1 x 200 ms warm-up, 1 x 300 ms measurement, 1 fork; smallest size only"),
        QUICK(2, 1000, 3, 1000, 1, "2 x 1 s warm-up, 3 x 1 s measurement, 1 fork"),
        FULL(5, 2000, 8, 2000, 2, "5 x 2 s warm-up, 8 x 2 s measurement, 2 forks");

        final int warmups;
        final int warmupMillis;
        final int iterations;
        final int iterationMillis;
        final int forks;
        final String description;

        Profile(final int warmups, final int warmupMillis, final int iterations, final int iterationMillis,
                final int forks, final String description) {
            this.warmups = warmups;
            this.warmupMillis = warmupMillis;
            this.iterations = iterations;
            this.iterationMillis = iterationMillis;
            this.forks = forks;
            this.description = description;
        }

        String flag() {
            return "--" + name().toLowerCase(Locale.ROOT);
        }
    }

    /** One benchmark class's selection. */
    record Plan(Class<?> benchmarkClass, List<String> methods, List<String> sizes, List<String> allocators) {
        int count() {
            return methods.size() * sizes.size() * allocators.size();
        }

        String include() {
            return "^" + Pattern.quote(benchmarkClass.getName() + ".") + "(" + String.join("|", methods) + ")$";
        }
    }

    /** One result row. */
    record Row(String benchmark, int size, int threads, String allocator, double score, double error,
               String unit, Map<String, Double> secondary) {
    }

    private Profile profile = Profile.QUICK;
    private String include;
    private List<String> sizes;
    private List<String> allocators;
    private Path out;
    private boolean noMarkdown;
    private Path resultsDir = Paths.get("benchmarks", "target", "jmh-results");
    private final List<Path> fromJson = new ArrayList<>();
    private Path fromLog;
    private final List<String> args;
    private final List<String> statsLines = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();

    private Report(final List<String> args) {
        this.args = args;
    }

    /**
     * @param args see the class comment
     * @throws Exception on I/O failure
     */
    public static void main(final String[] args) throws Exception {
        final Report r = new Report(List.of(args));
        try {
            r.parseArgs();
        } catch (final IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
        }
        System.exit(r.execute());
    }

    private static String usage() {
        return String.join("\n",
            "usage: benchmarks/run [--smoke | --quick | --full] [options]",
            "  --smoke            a few hundred ms per benchmark, smallest size only: checks that everything runs",
            "  --quick            (default) " + Profile.QUICK.description,
            "  --full             " + Profile.FULL.description,
            "  --include REGEX    only benchmarks whose name (e.g. RingBenchmark.ring1) matches",
            "  --size N,N         sizes to run (default: each benchmark's own list)",
            "  --allocator A,B    allocators to run (default: each benchmark's own list)",
            "  --out FILE         markdown report (default BENCHMARKS.md; none for --smoke)",
            "  --no-md            print the table only",
            "  --results-dir DIR  where JMH's JSON and log go (default benchmarks/target/jmh-results)",
            "  --from-json F,F    do not run: report these JMH JSON result files",
            "  --log FILE         with --from-json: JMH output holding the " + Jvm.STATS_PREFIX + " lines",
            "  --no-build         (benchmarks/run only) do not rebuild the jar");
    }

    private void parseArgs() {
        for (int k = 0; k < args.size(); k++) {
            final String a = args.get(k);
            switch (a) {
                case "--smoke" -> profile = Profile.SMOKE;
                case "--quick" -> profile = Profile.QUICK;
                case "--full" -> profile = Profile.FULL;
                case "--include" -> include = value(++k, a);
                case "--size" -> sizes = csv(value(++k, a));
                case "--allocator" -> allocators = csv(value(++k, a));
                case "--out" -> out = Paths.get(value(++k, a));
                case "--no-md" -> noMarkdown = true;
                case "--results-dir" -> resultsDir = Paths.get(value(++k, a));
                case "--from-json" -> csv(value(++k, a)).forEach(f -> fromJson.add(Paths.get(f)));
                case "--log" -> fromLog = Paths.get(value(++k, a));
                case "-h", "--help" -> {
                    System.out.println(usage());
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        if (out == null && !noMarkdown && profile != Profile.SMOKE) {
            out = Paths.get("BENCHMARKS.md");
        }
        if (noMarkdown) {
            out = null;
        }
    }

    private String value(final int k, final String flag) {
        if (k >= args.size()) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args.get(k);
    }

    private static List<String> csv(final String s) {
        return Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).collect(Collectors.toList());
    }

    // ------------------------------------------------------------------------------ run

    private int execute() throws IOException, RunnerException {
        final String loadBefore = loadAverage();
        final List<Path> jsons;
        if (fromJson.isEmpty()) {
            jsons = runAll();
        } else {
            jsons = fromJson;
            if (fromLog != null) {
                for (final String line : Files.readAllLines(fromLog)) {
                    final int at = line.indexOf(Jvm.STATS_PREFIX); // JMH may have started a line before it
                    if (at >= 0) {
                        statsLines.add(line.substring(at));
                    }
                }
            }
        }
        final String loadAfter = loadAverage();

        final List<Row> rows = new ArrayList<>();
        final Map<String, String> jvm = new LinkedHashMap<>();
        for (final Path p : jsons) {
            if (Files.exists(p)) {
                rows.addAll(readRows(p, jvm));
            }
        }
        final String table = tables(rows);
        System.out.println();
        System.out.println(table);
        final String stats = statsTable();
        if (!stats.isEmpty()) {
            System.out.println(stats);
        }
        if (out != null && !rows.isEmpty()) {
            Files.writeString(out, markdown(table, stats, jvm, loadBefore, loadAfter), StandardCharsets.UTF_8);
            System.out.println("wrote " + out.toAbsolutePath().normalize());
        }
        if (!failures.isEmpty()) {
            System.out.println(failures.size() + " benchmark(s) FAILED:");
            failures.forEach(f -> System.out.println("  " + f));
            return 1;
        }
        if (rows.isEmpty()) {
            System.out.println("no results");
            return 1;
        }
        return 0;
    }

    private List<Plan> plans() {
        final Pattern filter = include == null ? null : Pattern.compile(include);
        final List<Plan> plans = new ArrayList<>();
        for (final Class<?> c : CLASSES) {
            final List<String> methods = benchmarkNames(c).stream()
                .filter(m -> filter == null || filter.matcher(c.getSimpleName() + "." + m).find())
                .collect(Collectors.toList());
            if (methods.isEmpty()) {
                continue;
            }
            final List<String> ownSizes = List.of(paramValues(c, "size"));
            List<String> sz = sizes != null ? sizes : ownSizes;
            if (profile == Profile.SMOKE && sizes == null) {
                sz = List.of(ownSizes.get(0));
            }
            final List<String> ownAllocators = List.of(paramValues(c, "allocator"));
            final List<String> al = (allocators != null ? allocators : ownAllocators).stream()
                .filter(a -> supports(c, a))
                .collect(Collectors.toList());
            if (!al.isEmpty() && !sz.isEmpty()) {
                plans.add(new Plan(c, methods, sz, al));
            }
        }
        return plans;
    }

    /** Flavours without buffer objects ({@code unsafe}, {@code floor}) run in the ring only. */
    private static boolean supports(final Class<?> benchmarkClass, final String allocator) {
        if (!Arrays.asList(Flavour.NAMES).contains(allocator)) {
            throw new IllegalArgumentException("unknown allocator " + allocator + "; known: " + String.join(",", Flavour.NAMES));
        }
        return benchmarkClass == RingBenchmark.class || !(allocator.equals("unsafe") || allocator.equals("floor"));
    }

    private static List<String> benchmarkNames(final Class<?> c) {
        final Set<String> names = new TreeSet<>();
        for (final Method m : c.getMethods()) {
            if (m.isAnnotationPresent(Benchmark.class)) {
                final Group g = m.getAnnotation(Group.class);
                names.add(g != null ? g.value() : m.getName());
            }
        }
        return new ArrayList<>(names);
    }

    private static String[] paramValues(final Class<?> c, final String field) {
        try {
            return Class.forName(c.getName() + "$AllocatorState").getField(field).getAnnotation(Param.class).value();
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<Path> runAll() throws IOException, RunnerException {
        final List<Plan> plans = plans();
        if (plans.isEmpty()) {
            throw new IllegalArgumentException("nothing selected");
        }
        Files.createDirectories(resultsDir);
        final String tag = profile.name().toLowerCase(Locale.ROOT);
        final Path log = resultsDir.resolve(tag + ".log");
        final int total = plans.stream().mapToInt(Plan::count).sum();
        System.out.printf(Locale.ROOT, "[%s] %d benchmark(s): %s; JMH output in %s%n", tag, total,
            profile.description, log);
        final List<Path> jsons = new ArrayList<>();
        final PrintStream realOut = System.out;
        final PrintStream realErr = System.err;
        try (OutputStream logFile = Files.newOutputStream(log)) {
            // JMH copies the forks' stdout and stderr to System.out and System.err, not to its output format
            final boolean echo = profile != Profile.SMOKE;
            final LineTee tee = new LineTee(logFile, echo ? realOut : null);
            final LineTee teeErr = new LineTee(logFile, echo ? realErr : null, tee);
            final PrintStream ps = new PrintStream(tee, true, StandardCharsets.UTF_8);
            System.setOut(ps);
            System.setErr(new PrintStream(teeErr, true, StandardCharsets.UTF_8));
            final Progress progress = new Progress(
                OutputFormatFactory.createFormatInstance(ps, VerboseMode.NORMAL), tee, realOut, tag, total);
            for (final Plan p : plans) {
                final Path json = resultsDir.resolve(tag + "-" + p.benchmarkClass().getSimpleName() + ".json");
                Files.deleteIfExists(json);
                final Options opt = new OptionsBuilder()
                    .include(p.include())
                    .param("size", p.sizes().toArray(new String[0]))
                    .param("allocator", p.allocators().toArray(new String[0]))
                    .warmupIterations(profile.warmups)
                    .warmupTime(TimeValue.milliseconds(profile.warmupMillis))
                    .measurementIterations(profile.iterations)
                    .measurementTime(TimeValue.milliseconds(profile.iterationMillis))
                    .forks(profile.forks)
                    .shouldFailOnError(false)
                    .resultFormat(ResultFormatType.JSON)
                    .result(json.toString())
                    .build();
                final Collection<RunResult> results = new Runner(opt, progress).run();
                final Set<String> got = new LinkedHashSet<>();
                for (final RunResult rr : results) {
                    final BenchmarkParams bp = rr.getParams();
                    got.add(key(bp.getBenchmark(), bp.getParam("allocator"), bp.getParam("size")));
                }
                for (final String m : p.methods()) {
                    for (final String s : p.sizes()) {
                        for (final String a : p.allocators()) {
                            final String k = key(p.benchmarkClass().getName() + "." + m, a, s);
                            if (!got.contains(k)) {
                                failures.add(shortName(p.benchmarkClass().getName() + "." + m)
                                    + " allocator=" + a + " size=" + s + " (see " + log + ")");
                            }
                        }
                    }
                }
                jsons.add(json);
            }
            System.out.flush();
            System.err.flush();
            statsLines.addAll(tee.stats);
        } finally {
            System.setOut(realOut);
            System.setErr(realErr);
        }
        return jsons;
    }

    private static String key(final String benchmark, final String allocator, final String size) {
        return benchmark + "|" + allocator + "|" + size;
    }

    private static String shortName(final String benchmark) {
        final String[] parts = benchmark.split("\\.");
        return parts.length >= 2 ? parts[parts.length - 2] + "." + parts[parts.length - 1] : benchmark;
    }

    // ------------------------------------------------------------------------------ results

    private static List<Row> readRows(final Path json, final Map<String, String> jvm) throws IOException {
        final List<Row> rows = new ArrayList<>();
        final JsonElement root = JsonParser.parseString(Files.readString(json, StandardCharsets.UTF_8));
        if (!root.isJsonArray()) {
            throw new IllegalArgumentException(json + ": not a JMH JSON result (expected an array)");
        }
        for (final JsonElement e : root.getAsJsonArray()) {
            final JsonObject m = e.getAsJsonObject();
            final JsonObject params = m.has("params") ? m.getAsJsonObject("params") : new JsonObject();
            final JsonObject primary = m.getAsJsonObject("primaryMetric");
            final Map<String, Double> secondary = new LinkedHashMap<>();
            if (m.has("secondaryMetrics")) {
                for (final Map.Entry<String, JsonElement> se : m.getAsJsonObject("secondaryMetrics").entrySet()) {
                    secondary.put(se.getKey(), number(se.getValue().getAsJsonObject().get("score")));
                }
            }
            for (final String k : List.of("jdkVersion", "vmName", "vmVersion", "jmhVersion", "jvm")) {
                if (m.has(k)) {
                    jvm.putIfAbsent(k, m.get(k).getAsString());
                }
            }
            if (m.has("jvmArgs")) {
                final List<String> args = new ArrayList<>();
                m.getAsJsonArray("jvmArgs").forEach(a -> args.add(a.getAsString()));
                jvm.putIfAbsent("jvmArgs", String.join(" ", args));
            }
            rows.add(new Row(shortName(m.get("benchmark").getAsString()),
                (int) number(params.get("size")),
                m.get("threads").getAsInt(),
                params.has("allocator") ? params.get("allocator").getAsString() : "null",
                number(primary.get("score")),
                number(primary.get("scoreError")),
                primary.get("scoreUnit").getAsString(),
                secondary));
        }
        return rows;
    }

    /** JMH writes scores as numbers, or as the string "NaN" when it has none. */
    private static double number(final JsonElement v) {
        if (v == null || v.isJsonNull()) {
            return Double.NaN;
        }
        final JsonPrimitive p = v.getAsJsonPrimitive();
        return p.isNumber() ? p.getAsDouble() : Double.parseDouble(p.getAsString());
    }

    private String tables(final List<Row> rows) {
        final StringBuilder b = new StringBuilder();
        final Map<String, List<Row>> byBenchmarkClass = new LinkedHashMap<>();
        rows.stream()
            .sorted(Comparator.comparing((Row r) -> r.benchmark().split("\\.")[0]).reversed()
                .thenComparingInt(Row::size).thenComparingInt(Row::threads).thenComparing(Row::benchmark)
                .thenComparingInt(r -> allocatorOrder(r.allocator())))
            .forEach(r -> byBenchmarkClass.computeIfAbsent(r.benchmark().split("\\.")[0], k -> new ArrayList<>()).add(r));
        final Map<String, Map<String, String>> stats = parsedStats();
        for (final Map.Entry<String, List<Row>> e : byBenchmarkClass.entrySet()) {
            final boolean group = e.getValue().stream().anyMatch(r -> !r.secondary().isEmpty());
            b.append("### ").append(e.getKey()).append("\n\n");
            b.append("| benchmark | size (B) | threads | allocator | ns/op | ± (99.9%) | vs jdk | vs nettyPooled | vs floor |"
                + (group ? " produce ns/op | consume ns/op |" : "") + " kmem4j magazine hit rate |\n");
            b.append("|---|--:|--:|---|--:|--:|--:|--:|--:|" + (group ? "--:|--:|" : "") + "--:|\n");
            for (final Row r : e.getValue()) {
                b.append("| ").append(r.benchmark()).append(" | ").append(r.size()).append(" | ").append(r.threads())
                    .append(" | ").append(r.allocator()).append(" | ").append(fmt(r.score())).append(" | ")
                    .append(fmt(r.error())).append(" |");
                for (final String base : BASELINES) {
                    final Row br = e.getValue().stream()
                        .filter(x -> x.benchmark().equals(r.benchmark()) && x.size() == r.size()
                            && x.threads() == r.threads() && x.allocator().equals(base))
                        .findFirst().orElse(null);
                    b.append(' ').append(br == null || !(br.score() > 0) ? "—"
                        : String.format(Locale.ROOT, "%.2f×", r.score() / br.score())).append(" |");
                }
                if (group) {
                    b.append(' ').append(fmt(r.secondary().getOrDefault("produce", Double.NaN))).append(" | ")
                        .append(fmt(r.secondary().getOrDefault("consume", Double.NaN))).append(" |");
                }
                final Map<String, String> s = stats.get(statsKey(r.benchmark(), r.allocator(), r.size()));
                b.append(' ').append(s != null && s.containsKey("magazineHitRate") ? s.get("magazineHitRate") : "")
                    .append(" |\n");
            }
            b.append('\n');
        }
        if (!rows.isEmpty()) {
            b.append("Ratios are this row's ns/op over the named allocator's in the same benchmark, size and thread"
                + " count of this run: below 1.00× is faster. Scores are per thread (each of `ring2`'s two threads"
                + " does its own operations).\n");
        }
        return b.toString();
    }

    private static int allocatorOrder(final String a) {
        final int i = Arrays.asList(Flavour.NAMES).indexOf(a);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private static String fmt(final double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String statsKey(final String shortBenchmark, final String allocator, final int size) {
        return shortBenchmark + "|" + allocator + "|" + size;
    }

    /** {@code [allocator-stats] benchmark=... threads=... allocator=... size=... k=v ...} lines, by row key. */
    private Map<String, Map<String, String>> parsedStats() {
        final Map<String, Map<String, String>> m = new LinkedHashMap<>();
        for (final String line : statsLines) {
            final Map<String, String> kv = new LinkedHashMap<>();
            for (final String tok : line.substring(Jvm.STATS_PREFIX.length()).trim().split("\\s+")) {
                final int eq = tok.indexOf('=');
                if (eq > 0) {
                    kv.put(tok.substring(0, eq), tok.substring(eq + 1));
                }
            }
            if (kv.containsKey("benchmark") && kv.containsKey("allocator") && kv.containsKey("size")) {
                // with several forks the last trial's line wins
                m.put(statsKey(shortName(kv.get("benchmark")), kv.get("allocator"), Integer.parseInt(kv.get("size"))), kv);
            }
        }
        return m;
    }

    private String statsTable() {
        final Map<String, Map<String, String>> stats = parsedStats();
        final StringBuilder b = new StringBuilder();
        final List<Map<String, String>> kmem = stats.values().stream()
            .filter(kv -> kv.containsKey("magazineHitRate")).collect(Collectors.toList());
        if (!kmem.isEmpty()) {
            b.append("| benchmark | size (B) | threads | allocator | magazine hit rate | address order score | allocations"
                + " | fallbacks | remote frees sent | live buffers at end |\n");
            b.append("|---|--:|--:|---|--:|--:|--:|--:|--:|--:|\n");
            for (final Map<String, String> kv : kmem) {
                b.append("| ").append(shortName(kv.get("benchmark"))).append(" | ").append(kv.get("size")).append(" | ")
                    .append(kv.get("threads")).append(" | ").append(kv.get("allocator")).append(" | ")
                    .append(kv.get("magazineHitRate")).append(" | ").append(kv.get("addressOrderScore")).append(" | ")
                    .append(kv.get("allocations")).append(" | ").append(kv.get("fallbacks")).append(" | ")
                    .append(kv.get("remoteFreesSent")).append(" | ").append(kv.get("liveBuffers")).append(" |\n");
            }
            b.append("\nCounted over the whole trial (set-up fill, warm-up and measurement), read after every buffer"
                + " was released (rings emptied, queues drained).\n");
        }
        final List<String> netty = stats.values().stream()
            .filter(kv -> kv.get("allocator").startsWith("netty"))
            .map(kv -> kv.get("allocator") + ": " + kv.entrySet().stream()
                .filter(e -> !Set.of("benchmark", "threads", "allocator", "size", "usedDirectMemory").contains(e.getKey()))
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" ")))
            .filter(s -> !s.endsWith(": ")).distinct().collect(Collectors.toList());
        if (!netty.isEmpty()) {
            b.append("\nNetty settings seen in the forks: ").append(String.join("; ", netty)).append(".\n");
        }
        return b.toString();
    }

    // ------------------------------------------------------------------------------ markdown

    private String markdown(final String table, final String stats, final Map<String, String> jvm,
                            final String loadBefore, final String loadAfter) {
        final StringBuilder b = new StringBuilder();
        b.append("# kmem4j benchmarks\n\n");
        b.append("Generated by `benchmarks/run").append(args.isEmpty() ? "" : " " + String.join(" ", args))
            .append("` on ").append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")))
            .append(fromJson.isEmpty() ? "" : " (from saved JMH results)").append(".\n");
        b.append("Profile **").append(profile.name().toLowerCase(Locale.ROOT)).append("**: ").append(profile.description)
            .append(" per benchmark and parameter set. Mode: average time, ns/op, lower is better.\n\n");
        b.append("## Machine\n\n");
        b.append("- CPUs (`nproc`): ").append(Runtime.getRuntime().availableProcessors()).append('\n');
        b.append("- CPU model: ").append(cpuModel()).append('\n');
        b.append("- JDK: ").append(jvm.getOrDefault("jdkVersion", System.getProperty("java.runtime.version")))
            .append(", ").append(jvm.getOrDefault("vmName", System.getProperty("java.vm.name"))).append(' ')
            .append(jvm.getOrDefault("vmVersion", System.getProperty("java.vm.version"))).append('\n');
        b.append("- OS: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
            .append(' ').append(System.getProperty("os.arch")).append('\n');
        b.append("- JMH ").append(jvm.getOrDefault("jmhVersion", "?")).append("; fork JVM flags: `")
            .append(jvm.getOrDefault("jvmArgs", "?")).append("`\n");
        if (loadBefore != null) {
            b.append("- Load average (1/5/15 min) before / after the run: ").append(loadBefore).append(" / ")
                .append(loadAfter).append(" (anything well above 0 on this machine means other work competed")
                .append(" for the cores and skews the numbers)\n");
        }
        b.append("\n## Results\n\n").append(table).append('\n');
        if (!stats.isEmpty()) {
            b.append("## kmem4j statistics\n\n").append(stats).append('\n');
        }
        b.append("## What is measured\n\n");
        b.append("- **RingBenchmark** (`ring1`: 1 thread, `ring2`: 2 threads): each thread owns a ring of 8192 slots of")
            .append(" `size`-byte direct buffers, filled at set-up; one operation releases the buffer in a random slot")
            .append(" and allocates a new one there. Constant live set, random release order, same-thread free.\n");
        b.append("- **ProducerConsumerBenchmark** (`pc`): one thread allocates and offers into a bounded SPSC queue")
            .append(" (1024 entries), another polls and releases: every free is cross-thread. The score averages both")
            .append(" threads; the produce/consume columns show each side.\n\n");
        b.append("Allocators:\n\n");
        b.append("- `jdk`: `ByteBuffer.allocateDirect` + `Unsafe.invokeCleaner`.\n");
        b.append("- `jdkGc`: `ByteBuffer.allocateDirect`, dropped; GC's cleaner frees it (GC and Reference Handler")
            .append(" work on other cores is amortised into ns/op).\n");
        b.append("- `kmem4jTracked`: `SlabAllocator.allocate` (buffer with a JDK cleaner) + `Unsafe.invokeCleaner`.\n");
        b.append("- `kmem4jExplicit`: `SlabAllocator.allocateExplicit` (no cleaner) + `SlabAllocator.free`.\n");
        b.append("- `nettyPooled`: `PooledByteBufAllocator.DEFAULT.directBuffer(size, size)` + `release()`.\n");
        b.append("- `nettyAdaptive`: `new AdaptiveByteBufAllocator().directBuffer(size, size)` + `release()`.\n");
        b.append("- `unsafe`: `Unsafe.allocateMemory` + `setMemory` / `freeMemory` (malloc/free, no buffer object).\n");
        b.append("- `floor`: a pop from a per-thread `long[]` free stack over one pre-allocated region, zeroing, and the")
            .append(" JDK's mapped `DirectByteBuffer` constructor with a cleaner whose runnable pushes the block back:")
            .append(" the least a tracked-buffer allocator can cost on this JDK.\n\n");
        b.append("All allocators hand out zero-filled memory except Netty's (not zeroed). Netty runs with its defaults")
            .append(" except that its leak detector is disabled (`-Dio.netty.leakDetection.level=disabled`).")
            .append(" Fork heap is fixed at 1 GiB, `MaxDirectMemorySize` at 3 GiB.\n\n");
        b.append("## How to reproduce\n\n```sh\n");
        b.append("benchmarks/run            # quick profile: builds the jar, runs everything, rewrites BENCHMARKS.md\n");
        b.append("benchmarks/run --full     # longer iterations, 2 forks\n");
        b.append("benchmarks/run --smoke    # a few hundred ms each: checks that every benchmark runs\n");
        b.append("benchmarks/run --include RingBenchmark.ring1 --size 256 --allocator jdk,kmem4jTracked,floor\n");
        b.append("# or JMH directly (JSON with -rf json):\n");
        b.append("java -jar benchmarks/target/kmem4j-benchmarks.jar RingBenchmark -p size=256 -wi 2 -i 3 -w 1s -r 1s -f 1\n");
        b.append("```\n\nThe build: `./mvnw -B -q -pl benchmarks -am -DskipTests package`."
            + " Raw JMH JSON and output go to `benchmarks/target/jmh-results/`.\n");
        return b.toString();
    }

    private static String cpuModel() {
        try {
            for (final String line : Files.readAllLines(Paths.get("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (final IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static String loadAverage() {
        try {
            final String[] f = Files.readString(Paths.get("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (final IOException | RuntimeException e) {
            return null;
        }
    }

    // ------------------------------------------------------------------------------ output plumbing

    /**
     * Tees JMH's text output to the log (and the console unless silent), remembers the
     * {@code [allocator-stats]} lines and the recent lines of the current benchmark (shown on failure).
     */
    static final class LineTee extends OutputStream {
        private final OutputStream log;
        private final PrintStream console;
        private final LineTee lines;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        final List<String> stats = new ArrayList<>();
        final Deque<String> recent = new ArrayDeque<>();
        final List<String> pendingStats = new ArrayList<>();

        LineTee(final OutputStream log, final PrintStream console) {
            this(log, console, null);
        }

        /** A second stream (stderr) into the same log, whose lines are kept by {@code lines}. */
        LineTee(final OutputStream log, final PrintStream console, final LineTee lines) {
            this.log = log;
            this.console = console;
            this.lines = lines == null ? this : lines;
        }

        @Override
        public void write(final int b) throws IOException {
            synchronized (log) {
                log.write(b);
                if (console != null) {
                    console.write(b);
                }
                if (b == '\n') {
                    lines.endLine(line.toString(StandardCharsets.UTF_8));
                    line.reset();
                } else {
                    line.write(b);
                }
            }
        }

        @Override
        public void write(final byte[] b, final int off, final int len) throws IOException {
            for (int k = off; k < off + len; k++) {
                write(b[k]);
            }
        }

        private void endLine(final String text) {
            final String s = text.replace("\r", "");
            final int at = s.indexOf(Jvm.STATS_PREFIX);
            if (at >= 0) {
                stats.add(s.substring(at));
                pendingStats.add(s.substring(at));
            }
            recent.addLast(s);
            while (recent.size() > 40) {
                recent.removeFirst();
            }
        }

        @Override
        public void flush() throws IOException {
            synchronized (log) {
                log.flush();
                if (console != null) {
                    console.flush();
                }
            }
        }
    }

    /** JMH's own output format, plus one progress line per benchmark on the console. */
    static final class Progress implements OutputFormat {
        private final OutputFormat jmh;
        private final LineTee tee;
        private final PrintStream console;
        private final String tag;
        private final int total;
        private int n;
        private String current;

        Progress(final OutputFormat jmh, final LineTee tee, final PrintStream console, final String tag,
                 final int total) {
            this.jmh = jmh;
            this.tee = tee;
            this.console = console;
            this.tag = tag;
            this.total = total;
        }

        private static String describe(final BenchmarkParams p) {
            return shortName(p.getBenchmark()) + " threads=" + p.getThreads() + " allocator=" + p.getParam("allocator")
                + " size=" + p.getParam("size");
        }

        @Override
        public void startBenchmark(final BenchmarkParams params) {
            jmh.startBenchmark(params);
            n++;
            current = describe(params);
            tee.recent.clear();
            tee.pendingStats.clear();
            console.printf(Locale.ROOT, "[%s %d/%d] %s ...%n", tag, n, total, current);
        }

        @Override
        public void endBenchmark(final BenchmarkResult result) {
            jmh.endBenchmark(result);
            jmh.flush();
            if (result == null || result.getPrimaryResult() == null) {
                console.printf(Locale.ROOT, "[%s %d/%d] %s FAILED; last output:%n", tag, n, total, current);
                tee.recent.forEach(l -> console.println("    " + l));
                return;
            }
            final Result<?> r = result.getPrimaryResult();
            console.printf(Locale.ROOT, "[%s %d/%d] %s: %.1f%s %s%n", tag, n, total, describe(result.getParams()),
                r.getScore(), Double.isNaN(r.getScoreError()) ? "" : String.format(Locale.ROOT, " ± %.1f", r.getScoreError()),
                r.getScoreUnit());
            tee.pendingStats.forEach(l -> console.println("    " + l));
            tee.pendingStats.clear();
        }

        @Override
        public void iteration(final BenchmarkParams b, final IterationParams i, final int k) {
            jmh.iteration(b, i, k);
        }

        @Override
        public void iterationResult(final BenchmarkParams b, final IterationParams i, final int k, final IterationResult r) {
            jmh.iterationResult(b, i, k, r);
        }

        @Override
        public void startRun() {
            jmh.startRun();
        }

        @Override
        public void endRun(final Collection<RunResult> results) {
            jmh.endRun(results);
        }

        @Override
        public void print(final String s) {
            jmh.print(s);
        }

        @Override
        public void println(final String s) {
            jmh.println(s);
        }

        @Override
        public void flush() {
            jmh.flush();
        }

        @Override
        public void close() {
            jmh.flush(); // the stream is ours to close, after all runs
        }

        @Override
        public void verbosePrintln(final String s) {
            jmh.verbosePrintln(s);
        }

        @Override
        public void write(final int b) {
            jmh.write(b);
        }

        @Override
        public void write(final byte[] b) throws IOException {
            jmh.write(b);
        }
    }
}
