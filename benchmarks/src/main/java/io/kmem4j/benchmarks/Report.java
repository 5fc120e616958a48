package io.kmem4j.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
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
import java.util.Collections;
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

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the benchmarks with a profile, reads JMH's JSON results back and reports ns/op per workload,
 * parameters and allocator with ratios against {@code jdk}, {@code nettyPooled} and {@code floor}
 * from the same run, the workloads' own figures (GC count, latency percentiles, RSS), the kmem4j
 * statistics the forks print, and the goals of issue 7; writes {@code BENCHMARKS.md}. Started by
 * {@code benchmarks/run} from the repository root.
 *
 * <pre>
 * Report [--smoke | --quick | --full] [--include REGEX] [--size N,N] [--allocator A,B] [--agent JAR]
 *        [--out FILE | --no-md] [--rounds N] [--results-dir DIR] [--from-json FILE[,FILE]] [--log FILE]
 * </pre>
 *
 * <p>With more than one fork (the full profile's 2, or {@code --rounds N}) the forks run in rounds: each
 * round runs one fork of every selected benchmark in turn, so that a slow phase of the machine (this VM's
 * speed varies by 2x over minutes) meets the allocators of a workload alike; rows of several rounds are
 * merged ({@link Row#merge}) and each speed goal is the median over rounds of its ratio within a round,
 * with the lowest and the highest round's beside it, as the programs harness reports its goals (the
 * result files name their round, {@code -rN-}, which {@code --from-json} reads back).
 *
 * <p>The allocators that need the agent ({@link Flavour#WITH_AGENT}) run in forks of their own, started
 * with {@code -javaagent:<agent jar>} (JMH's {@code jvmArgsPrepend}; the benchmark classes' own
 * {@code jvmArgsAppend} still apply), and {@code kmem4jNetty} in forks of its own with
 * {@code -javaagent:<agent jar>=presets=netty-allocator}. {@code BENCHMARKS.md} is regenerated up to the line
 * {@value #HAND_WRITTEN}; everything from that line on is hand-written and kept as it is.
 *
 * <p>Exit status 0 when every selected benchmark produced a result, 1 when some failed, 2 on bad usage.
 */
public final class Report {
    static final List<Class<?>> CLASSES = List.of(RingBenchmark.class, SizeMixBenchmark.class,
        ProducerConsumerBenchmark.class, GcOnlyBenchmark.class, NearLimitBenchmark.class, ChainBenchmark.class,
        MemoryBenchmark.class);
    /** The marker line in BENCHMARKS.md after which the text is hand-written and kept. */
    static final String HAND_WRITTEN = "<!-- hand-written below: benchmarks/run keeps everything after this line -->";

    /** A run profile: JMH iteration counts and times, and what it selects. */
    enum Profile {
        SMOKE(1, 200, 1, 300, 1, "1 x 200 ms warm-up, 1 x 300 ms measurement, 1 fork; the quick selection, smallest size"),
        QUICK(1, 1000, 3, 1000, 1, "1 x 1 s warm-up, 3 x 1 s measurement, 1 fork; a selection (see below)"),
        FULL(3, 1000, 5, 1000, 2, "3 x 1 s warm-up, 5 x 1 s measurement, 2 rounds of one fork each; every parameter");

        final int warmups;
        final int warmupMillis;
        final int iterations;
        final int iterationMillis;
        /** Forks of each benchmark: with more than one, rounds of one fork each ({@link Report#runAll}). */
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
    }

    /**
     * What the quick (and smoke) profile leaves out of the benchmark classes' own parameter lists,
     * to stay a few minutes on 2 cores: {@code ring2} at 256 B only, no 64 KiB ring, no zero-on-allocation
     * variants, the chain after churn only.
     */
    private static final Map<String, Map<String, List<String>>> QUICK_SELECTION = Map.of(
        "RingBenchmark.ring1", Map.of("size", List.of("256", "4096"), "allocator", List.of("jdk", "kmem4jAgent",
            "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "kmem4jNetty", "unsafe", "floor")),
        "RingBenchmark.ring2", Map.of("size", List.of("256"), "allocator", List.of("jdk", "kmem4jAgent",
            "kmem4jTracked", "kmem4jExplicit", "nettyPooled", "nettyAdaptive", "kmem4jNetty", "unsafe", "floor")),
        "ChainBenchmark.traverse", Map.of("state", List.of("churned")));

    /**
     * One JMH run: a benchmark method, its parameters, and the agent its forks carry.
     *
     * @param agentOptions null: no agent; otherwise {@code -javaagent:<jar>} with these options ({@code ""}: none),
     *                     {@link Flavour#agentOptions}
     */
    record Plan(Class<?> benchmarkClass, String method, Map<String, List<String>> params, String agentOptions) {
        boolean agent() {
            return agentOptions != null;
        }

        /** @return what the result file's name adds: {@code ""}, {@code -agent}, {@code -agent-presets-netty-allocator} */
        String fileSuffix() {
            return agentOptions == null ? "" : agentOptions.isEmpty() ? "-agent"
                : "-agent-" + agentOptions.replaceAll("[^A-Za-z0-9]+", "-");
        }

        /** @return how the failures list names it: {@code ""}, {@code " (agent)"}, {@code " (agent presets=...)"} */
        String label() {
            return agentOptions == null ? "" : agentOptions.isEmpty() ? " (agent)" : " (agent " + agentOptions + ")";
        }

        int count() {
            return params.values().stream().mapToInt(List::size).reduce(1, (a, b) -> a * b);
        }

        String include() {
            return "^" + Pattern.quote(benchmarkClass.getName() + ".") + method + "$";
        }

        String name() {
            return benchmarkClass.getSimpleName() + "." + method;
        }
    }

    private Profile profile = Profile.QUICK;
    private String include;
    private List<String> sizes;
    private List<String> allocators;
    private Path agentJar = Paths.get("agent", "target", "kmem4j-agent.jar");
    private Path out;
    private boolean noMarkdown;
    private Path resultsDir = Paths.get("benchmarks", "target", "jmh-results");
    private final List<Path> fromJson = new ArrayList<>();
    private Path fromLog;
    private int rounds;
    private final List<String> args;
    private final TrialStats trialStats = new TrialStats();
    private final List<String> failures = new ArrayList<>();
    private long runMillis;

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
            "  --smoke            " + Profile.SMOKE.description,
            "  --quick            (default) " + Profile.QUICK.description,
            "  --full             " + Profile.FULL.description,
            "  --include REGEX    only benchmarks whose name (e.g. RingBenchmark.ring1) matches",
            "  --size N,N         sizes to run (default: the profile's selection)",
            "  --allocator A,B    allocators to run (default: the profile's selection; each workload runs those it can)",
            "  --agent JAR        the kmem4j agent for the allocators that need it (kmem4jAgent, kmem4jTracked, kmem4jNetty; default agent/target/kmem4j-agent.jar)",
            "  --out FILE         markdown report (default BENCHMARKS.md; none for --smoke)",
            "  --no-md            print the tables only",
            "  --rounds N         forks of each benchmark, run as N rounds of one fork each: every selected benchmark",
            "                     once per round, so that a slow phase of the host meets every allocator, and each",
            "                     speed goal is the median over rounds of its ratio within a round (default: the",
            "                     profile's forks; result files name their round, -rN-, for --from-json)",
            "  --results-dir DIR  where JMH's JSON and log go (default benchmarks/target/jmh-results)",
            "  --from-json F,F    do not run: report these JMH JSON result files",
            "  --log FILE         with --from-json: JMH output holding the " + Jvm.STATS_PREFIX + " lines",
            "  --no-build         (benchmarks/run only) do not rebuild the jars");
    }

    /**
     * @param args the command line
     * @return a report with {@code args} parsed
     * @throws IllegalArgumentException naming the argument that is wrong
     */
    static Report parse(final List<String> args) {
        final Report r = new Report(args);
        r.parseArgs();
        return r;
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
                case "--agent" -> agentJar = Paths.get(value(++k, a));
                case "--out" -> out = Paths.get(value(++k, a));
                case "--no-md" -> noMarkdown = true;
                case "--results-dir" -> resultsDir = Paths.get(value(++k, a));
                case "--rounds" -> rounds = positive(value(++k, a), a);
                case "--from-json" -> csv(value(++k, a)).forEach(f -> fromJson.add(Paths.get(f)));
                case "--log" -> fromLog = Paths.get(value(++k, a));
                case "-h", "--help" -> {
                    System.out.println(usage());
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        if (allocators != null) {
            for (final String al : allocators) {
                if (!Arrays.asList(Flavour.NAMES).contains(al)) {
                    throw new IllegalArgumentException("unknown allocator " + al + "; known: " + String.join(",", Flavour.NAMES));
                }
            }
        }
        if (rounds > 0 && !fromJson.isEmpty()) {
            throw new IllegalArgumentException("--rounds runs benchmarks; with --from-json the rounds are those the files"
                + " name (-rN-)");
        }
        final List<Path> distinct = fromJson.stream().map(f -> f.toAbsolutePath().normalize()).distinct().toList();
        fromJson.clear();
        fromJson.addAll(distinct);
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

    private static int positive(final String v, final String flag) {
        try {
            final int n = Integer.parseInt(v);
            if (n >= 1 && n <= 100) {
                return n;
            }
        } catch (final NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(flag + " " + v + ": allowed 1 to 100");
    }

    private static List<String> csv(final String s) {
        return Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).collect(Collectors.toList());
    }

    // ------------------------------------------------------------------------------ run

    private int execute() throws IOException, RunnerException {
        if (profile == Profile.SMOKE) {
            // the smoke profile checks that the benchmarks compile and run, not their speed: it must not
            // fail because another JMH run (a developer's --full) holds JMH's machine-wide lock
            System.setProperty("jmh.ignoreLock", "true");
        }
        final String loadBefore = loadAverage();
        final long t0 = System.nanoTime();
        final List<Path> jsons;
        if (fromJson.isEmpty()) {
            jsons = runAll();
        } else {
            jsons = fromJson;
            if (fromLog != null) {
                for (final String line : Files.readAllLines(fromLog)) {
                    final int at = line.indexOf(Jvm.STATS_PREFIX); // JMH may have started a line before it
                    if (at >= 0) {
                        trialStats.add(line.substring(at));
                    }
                }
            }
        }
        runMillis = (System.nanoTime() - t0) / 1_000_000;
        final String loadAfter = loadAverage();

        final List<Row> read = new ArrayList<>();
        final Map<String, String> jvm = new LinkedHashMap<>();
        for (final Path p : jsons) {
            if (Files.exists(p)) {
                read.addAll(readRows(p, jvm));
            }
        }
        final List<Row> rows = Row.merge(read);
        final ReportTables t = new ReportTables(rows, trialStats);
        final String table = t.tables();
        final String goals = t.goals();
        final String scalingGoals = t.scalingGoals();
        System.out.println();
        System.out.println(table);
        System.out.println(goals);
        System.out.println(scalingGoals);
        final String stats = statsTable();
        if (!stats.isEmpty()) {
            System.out.println(stats);
        }
        if (fromJson.isEmpty()) {
            System.out.printf(Locale.ROOT, "run took %.1f min%n", runMillis / 60000.0);
        }
        if (out != null && !rows.isEmpty()) {
            Files.writeString(out, markdown(table, goals, scalingGoals, stats, jvm, loadBefore, loadAfter) + handWritten(out),
                StandardCharsets.UTF_8);
            System.out.println("wrote " + out.toAbsolutePath().normalize());
        }
        if (!failures.isEmpty()) {
            System.out.println(failures.size() + " failure(s):");
            failures.forEach(f -> System.out.println("  " + f));
            return 1;
        }
        if (rows.isEmpty()) {
            System.out.println("no results");
            return 1;
        }
        return 0;
    }

    /** @return the hand-written tail of {@code file} (from the marker line on), or a fresh marker. */
    static String handWritten(final Path file) throws IOException {
        if (Files.exists(file)) {
            final String s = Files.readString(file, StandardCharsets.UTF_8);
            final int at = s.indexOf(HAND_WRITTEN);
            if (at >= 0) {
                return s.substring(at);
            }
        }
        return HAND_WRITTEN + "\n";
    }

    List<Plan> plans() {
        final Pattern filter = include == null ? null : Pattern.compile(include);
        final List<Plan> plans = new ArrayList<>();
        for (final Class<?> c : CLASSES) {
            for (final String m : benchmarkNames(c)) {
                final String name = c.getSimpleName() + "." + m;
                if (filter != null && !filter.matcher(name).find()) {
                    continue;
                }
                final Map<String, List<String>> params = new LinkedHashMap<>();
                for (final Map.Entry<String, String[]> p : params(c).entrySet()) {
                    List<String> v = List.of(p.getValue());
                    if (profile != Profile.FULL) {
                        v = QUICK_SELECTION.getOrDefault(name, Map.of()).getOrDefault(p.getKey(), v);
                    }
                    if (p.getKey().equals("size") && sizes != null) {
                        v = sizes;
                    } else if (p.getKey().equals("size") && profile == Profile.SMOKE) {
                        v = List.of(v.get(0));
                    }
                    if (p.getKey().equals("allocator") && allocators != null) {
                        final List<String> own = List.of(p.getValue());
                        v = allocators.stream().filter(own::contains).toList(); // those the workload can run
                    }
                    params.put(p.getKey(), v);
                }
                if (params.values().stream().anyMatch(List::isEmpty)) {
                    continue;
                }
                // one plan per kind of fork: without the agent, with it, with it and other options
                final Map<String, List<String>> byFork = new LinkedHashMap<>();
                for (final String a : params.get("allocator")) {
                    byFork.computeIfAbsent(Flavour.agentOptions(a), k -> new ArrayList<>()).add(a); // null: no agent
                }
                for (final List<String> same : byFork.values()) {
                    final Map<String, List<String>> p = new LinkedHashMap<>(params);
                    p.put("allocator", same);
                    plans.add(new Plan(c, m, p, Flavour.agentOptions(same.get(0))));
                }
            }
        }
        return plans;
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

    /** @return the {@code @Param} lists of {@code c}'s {@code AllocatorState}, in declaration order. */
    private static Map<String, String[]> params(final Class<?> c) {
        try {
            final Map<String, String[]> m = new LinkedHashMap<>();
            for (final Field f : Class.forName(c.getName() + "$AllocatorState").getFields()) {
                final Param p = f.getAnnotation(Param.class);
                if (p != null) {
                    m.put(f.getName(), p.value());
                }
            }
            return m;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<Path> runAll() throws IOException, RunnerException {
        final List<Plan> plans = plans();
        if (plans.isEmpty()) {
            throw new IllegalArgumentException("nothing selected");
        }
        if (plans.stream().anyMatch(Plan::agent) && !Files.isRegularFile(agentJar)) {
            throw new IllegalArgumentException("allocators " + Flavour.WITH_AGENT + " need the agent jar " + agentJar
                + ": build it with ./mvnw -B -q -pl agent -am -DskipTests package, or leave the allocator out");
        }
        Files.createDirectories(resultsDir);
        final String tag = profile.name().toLowerCase(Locale.ROOT);
        final Path log = resultsDir.resolve(tag + ".log");
        final int forks = rounds > 0 ? rounds : profile.forks;
        final int total = plans.stream().mapToInt(Plan::count).sum() * forks;
        System.out.printf(Locale.ROOT, "[%s] %d trial(s): %s%s; JMH output in %s%n", tag, total, profile.description,
            rounds > 0 ? " (--rounds " + rounds + ": " + rounds + " round(s) of one fork each instead)" : "", log);
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
            // each fork of every plan in turn (a round), not a plan's forks back to back: a phase of the
            // host (this VM's varies by 2x over minutes) then meets the allocators of a workload alike
            for (int round = 0; round < forks; round++) {
                final List<Plan> order = roundOrder(plans, round);
                for (final Plan p : order) {
                    final int k = plans.indexOf(p);
                    final Path json = resultsDir.resolve(tag + (forks > 1 ? "-r" + (round + 1) : "") + "-" + k + "-" + p.name()
                        + p.fileSuffix() + ".json");
                    Files.deleteIfExists(json);
                    final ChainedOptionsBuilder opt = new OptionsBuilder()
                        .include(p.include())
                        .forks(1)
                        .shouldFailOnError(false)
                        .resultFormat(ResultFormatType.JSON)
                        .result(json.toString());
                    p.params().forEach((name, values) -> opt.param(name, values.toArray(new String[0])));
                    if (!singleShot(p.benchmarkClass())) {
                        opt.warmupIterations(profile.warmups)
                            .warmupTime(TimeValue.milliseconds(warmupMillis(profile, p.benchmarkClass())))
                            .measurementIterations(profile.iterations)
                            .measurementTime(TimeValue.milliseconds(iterationMillis(profile, p.benchmarkClass())));
                    }
                    if (p.agent()) {
                        opt.jvmArgsPrepend(Flavour.javaagent(agentJar, p.agentOptions()));
                    }
                    final Collection<RunResult> results = new Runner(opt.build(), progress).run();
                    final Set<String> got = new LinkedHashSet<>();
                    for (final RunResult rr : results) {
                        got.add(rr.getParams().getParam("allocator") + "|" + paramsKey(rr.getParams()));
                    }
                    final int expected = p.count();
                    if (got.size() < expected) {
                        failures.add(p.name() + p.label() + (forks > 1 ? ", round " + (round + 1) : "")
                            + ": " + (expected - got.size()) + " of " + expected + " parameter sets gave no result (see " + log + ")");
                    }
                    jsons.add(json);
                }
            }
            System.out.flush();
            System.err.flush();
            tee.stats.forEach(trialStats::add);
        } finally {
            System.setOut(realOut);
            System.setErr(realErr);
        }
        return jsons;
    }

    /**
     * The plans in the order of round {@code round}: as listed in even rounds; in odd rounds the plans of
     * a benchmark (its plain forks and its agent forks, listed next to each other) run in reverse order,
     * so that no side of a comparison always runs first.
     */
    static List<Plan> roundOrder(final List<Plan> plans, final int round) {
        final List<Plan> order = new ArrayList<>(plans);
        if (round % 2 == 1) {
            for (int i = 0; i < order.size(); ) {
                int j = i + 1;
                while (j < order.size() && order.get(j).name().equals(order.get(i).name())) {
                    j++;
                }
                Collections.reverse(order.subList(i, j));
                i = j;
            }
        }
        return order;
    }

    private static String paramsKey(final BenchmarkParams bp) {
        return bp.getParamsKeys().stream().map(k -> k + "=" + bp.getParam(k)).collect(Collectors.joining(","));
    }

    /** @return {@code c}'s iterations under {@code profile}, e.g. "3 x 2 s warm-up, 5 x 4 s measurement" */
    static String timing(final Profile profile, final Class<?> c) {
        return String.format(Locale.ROOT, "%d x %s warm-up, %d x %s measurement", profile.warmups,
            seconds(warmupMillis(profile, c)), profile.iterations, seconds(iterationMillis(profile, c)));
    }

    private static String seconds(final int millis) {
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }

    /** @return the warm-up iteration time of {@code c}'s trials under {@code profile}, ms ({@link MinimumIterationTime}) */
    static int warmupMillis(final Profile profile, final Class<?> c) {
        final MinimumIterationTime min = c.getAnnotation(MinimumIterationTime.class);
        return min == null || profile == Profile.SMOKE ? profile.warmupMillis : Math.max(profile.warmupMillis, min.warmupMillis());
    }

    /** @return the measurement iteration time of {@code c}'s trials under {@code profile}, ms ({@link MinimumIterationTime}) */
    static int iterationMillis(final Profile profile, final Class<?> c) {
        final MinimumIterationTime min = c.getAnnotation(MinimumIterationTime.class);
        return min == null || profile == Profile.SMOKE ? profile.iterationMillis : Math.max(profile.iterationMillis, min.iterationMillis());
    }

    /** Single-shot classes (the memory burst) keep their own iteration counts: one measured shot, no warm-up. */
    private static boolean singleShot(final Class<?> c) {
        final BenchmarkMode m = c.getAnnotation(BenchmarkMode.class);
        return m != null && Arrays.asList(m.value()).contains(Mode.SingleShotTime);
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
            final List<double[]> forks = rawData(primary);
            final int round = forks.size() == 1 ? round(json) : Row.NO_ROUND;
            final Map<String, String> workload = new LinkedHashMap<>();
            for (final String p : TrialStats.PARAMS) {
                if (params.has(p)) {
                    workload.put(p, params.get(p).getAsString());
                }
            }
            rows.add(new Row(Row.shortName(m.get("benchmark").getAsString()), workload,
                m.get("threads").getAsInt(),
                params.has("allocator") ? params.get("allocator").getAsString() : "null",
                number(primary.get("score")),
                number(primary.get("scoreError")),
                primary.get("scoreUnit").getAsString(),
                secondary, forks, forks.stream().map(f -> round).collect(Collectors.toList())));
        }
        return rows;
    }

    /** The round in a result file's name, as {@link #runAll} writes it: {@code full-r2-0-RingBenchmark.ring1.json}. */
    private static final Pattern ROUND_IN_NAME = Pattern.compile("-r(\\d+)-");

    /** @return the round of a one-fork result file, from its name; {@link Row#NO_ROUND} when it names none */
    static int round(final Path json) {
        final java.util.regex.Matcher m = ROUND_IN_NAME.matcher(json.getFileName().toString());
        return m.find() ? Integer.parseInt(m.group(1)) : Row.NO_ROUND;
    }

    /** @return the measured iterations of each fork ({@code rawData}: an array per fork), empty when absent */
    private static List<double[]> rawData(final JsonObject primary) {
        final List<double[]> forks = new ArrayList<>();
        if (primary.has("rawData") && primary.get("rawData").isJsonArray()) {
            for (final JsonElement fork : primary.getAsJsonArray("rawData")) {
                final List<Double> it = new ArrayList<>();
                fork.getAsJsonArray().forEach(v -> it.add(number(v)));
                forks.add(it.stream().mapToDouble(Double::doubleValue).toArray());
            }
        }
        return forks;
    }

    /** JMH writes scores as numbers, or as the string "NaN" when it has none. */
    private static double number(final JsonElement v) {
        if (v == null || v.isJsonNull()) {
            return Double.NaN;
        }
        final JsonPrimitive p = v.getAsJsonPrimitive();
        return p.isNumber() ? p.getAsDouble() : Double.parseDouble(p.getAsString());
    }

    private String statsTable() {
        final StringBuilder b = new StringBuilder();
        final List<Map<String, String>> kmem = new ArrayList<>();
        trialStats.all().forEach(kv -> {
            if (kv.containsKey("magazineHitRate")) {
                kmem.add(kv);
            }
        });
        if (!kmem.isEmpty()) {
            b.append("| benchmark | size (B) | threads | allocator | magazine hit rate | address order score | allocations"
                + " | fallbacks | remote frees sent | live buffers at end |\n");
            b.append("|---|--:|--:|---|--:|--:|--:|--:|--:|--:|\n");
            for (final Map<String, String> kv : kmem) {
                b.append("| ").append(Row.shortName(kv.get("benchmark"))).append(kv.containsKey("state")
                        ? " " + kv.get("state") : "").append(" | ").append(kv.getOrDefault("size", "mix"))
                    .append(" | ").append(kv.get("threads")).append(" | ").append(kv.get("allocator")).append(" | ")
                    .append(kv.get("magazineHitRate")).append(" | ").append(kv.get("addressOrderScore")).append(" | ")
                    .append(kv.get("allocations")).append(" | ").append(kv.get("fallbacks")).append(" | ")
                    .append(kv.get("remoteFreesSent")).append(" | ").append(kv.get("liveBuffers")).append(" |\n");
            }
            b.append("\nCounted over the whole trial (set-up fill, warm-up and measurement), read after every buffer"
                + " was released (rings emptied, queues drained; GC-only: dropped buffers GC has not collected yet"
                + " are still live). `kmem4jAgent`: read from the agent's MXBean (address order not exported).\n");
        }
        final Set<String> netty = new LinkedHashSet<>();
        trialStats.all().forEach(kv -> {
            if (kv.get("allocator").startsWith("netty") && kv.containsKey("directArenas")) {
                netty.add(kv.get("allocator") + ": useCacheForAllThreads=" + kv.get("useCacheForAllThreads")
                    + " directArenas=" + kv.get("directArenas"));
            }
        });
        if (!netty.isEmpty()) {
            b.append("\nNetty settings seen in the forks: ").append(String.join("; ", netty)).append(".\n");
        }
        return b.toString();
    }

    // ------------------------------------------------------------------------------ markdown

    private String markdown(final String table, final String goals, final String scalingGoals, final String stats,
                            final Map<String, String> jvm, final String loadBefore, final String loadAfter) {
        final StringBuilder b = new StringBuilder();
        b.append("# kmem4j benchmarks\n\n");
        b.append("Generated by `benchmarks/run").append(args.isEmpty() ? "" : " " + String.join(" ", args))
            .append("` on ").append(ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z")))
            .append(fromJson.isEmpty() ? String.format(Locale.ROOT, " (the run took %.1f min)", runMillis / 60000.0)
                : " (from saved JMH results)").append(".\n");
        b.append("Profile **").append(profile.name().toLowerCase(Locale.ROOT)).append("**: ").append(profile.description)
            .append(rounds > 0 ? " (`--rounds " + rounds + "`: " + rounds + " round(s) of one fork each instead)" : "")
            .append(fromJson.isEmpty() ? "; GcOnlyBenchmark " + timing(profile, GcOnlyBenchmark.class) + " (`@MinimumIterationTime`)" : "")
            .append(". Mode: average time, ns/op, lower is better (the memory burst: one shot).\n\n");
        b.append("## Machine\n\n");
        b.append("- CPUs (`nproc`): ").append(Runtime.getRuntime().availableProcessors()).append('\n');
        b.append("- CPU model: ").append(cpuModel()).append('\n');
        b.append("- JDK: ").append(jvm.getOrDefault("jdkVersion", System.getProperty("java.runtime.version")))
            .append(", ").append(jvm.getOrDefault("vmName", System.getProperty("java.vm.name"))).append(' ')
            .append(jvm.getOrDefault("vmVersion", System.getProperty("java.vm.version"))).append('\n');
        b.append("- OS: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
            .append(' ').append(System.getProperty("os.arch")).append('\n');
        b.append("- JMH ").append(jvm.getOrDefault("jmhVersion", "?")).append("; fork JVM flags (ring): `")
            .append(Jvm.ADD_EXPORTS).append(' ').append(Jvm.ADD_OPENS).append(' ').append(Jvm.ADD_OPENS_REF).append(' ').append(Jvm.XMS).append(' ')
            .append(Jvm.XMX).append(' ').append(Jvm.PRE_TOUCH).append(' ').append(Jvm.MAX_DIRECT).append(' ').append(Jvm.NETTY_NO_LEAK_DETECTION)
            .append("`; the forks of `kmem4jAgent` and the tracked flavours add `-javaagent:agent/target/kmem4j-agent.jar`, those of `kmem4jNetty` `-javaagent:agent/target/kmem4j-agent.jar=")
            .append(Flavour.NETTY_AGENT_OPTIONS).append("`\n");
        if (loadBefore != null) {
            b.append("- Load average (1/5/15 min) before / after the run: ").append(loadBefore).append(" / ")
                .append(loadAfter).append(" (anything well above 0 on this machine means other work competed")
                .append(" for the cores and skews the numbers)\n");
        }
        b.append("\n## Goals (issue 7)\n\n").append(goals).append('\n');
        b.append("## Goals (issue 14: no JDK-global lock on kmem4j's path)\n\n").append(scalingGoals).append('\n');
        b.append("## Results\n\n").append(table).append('\n');
        if (!stats.isEmpty()) {
            b.append("## kmem4j statistics\n\n").append(stats).append('\n');
        }
        b.append("## What is measured\n\n");
        b.append("- **RingBenchmark** (`ring1`: 1 thread, `ring2`: 2 threads): each thread owns a ring of 8192 slots of")
            .append(" `size`-byte buffers, filled at set-up; one operation releases the buffer in a random slot and")
            .append(" allocates a new one there. Constant live set, random release order, same-thread free.\n");
        b.append("- **SizeMixBenchmark** (`mix`): sizes from the value sizes of Facebook's memcached ETC pool")
            .append(" (Atikoglu et al., SIGMETRICS 2012: generalized Pareto, scale 214.476, shape 0.348238; median")
            .append(" 170 B, mean 329 B, p99 2.4 KiB, capped at 64 KiB), one fixed sequence for every allocator; the live")
            .append(" set grows from 128 to 512 buffers and drains back in random order. One operation is one allocation")
            .append(" or one release.\n");
        b.append("- **ProducerConsumerBenchmark** (`pc`): one thread allocates and offers into a bounded SPSC queue")
            .append(" (1024 entries), another polls and releases: every free is cross-thread. The score averages both")
            .append(" threads; the produce/consume columns show each side.\n");
        b.append("- **GcOnlyBenchmark** (`dropped`): the 1-thread ring, but the buffer in the slot is dropped, never")
            .append(" released: only GC and the JDK cleaner give memory back. Only allocators whose dropped buffers GC")
            .append(" reclaims can run it: Netty's pooled and adaptive buffers have no cleaner (a dropped one never")
            .append(" returns to the pool), kmem4j's explicit buffers have none by design, `unsafe`/`floor` memory has")
            .append(" no owner object. Its forks run with `").append(Jvm.GC_ONLY_MAX_DIRECT).append("` (the JDK's default")
            .append(" for the fork's `").append(Jvm.XMX).append("` heap under G1) and, in this profile, ")
            .append(timing(profile, GcOnlyBenchmark.class)).append(", so that an iteration covers several collections,")
            .append(" and at 4 KiB several trips to the limit and back (a report `--from-json` describes the current")
            .append(" code, not the files read). GCs and GC ms: over the measurement iterations (GC MXBeans).\n");
        b.append("- **NearLimitBenchmark** (`replace`): `MaxDirectMemorySize=").append(Jvm.NEAR_LIMIT_MAX_DIRECT_MIB)
            .append("m`, a live set of 90% of it, one thread releasing a random buffer and allocating anew. Every")
            .append(" operation is timed (HdrHistogram, measurement iterations only, two `nanoTime` calls included;")
            .append(" percentiles from the forks' merged histograms); GCs from the GC MXBeans; `OutOfMemoryError`s")
            .append(" counted (the slot stays empty).\n");
        b.append("- **ChainBenchmark** (`traverse`, address order): 65,536 nodes of 64 B linked through their first 8 bytes")
            .append(" in allocation order; `churned`: all freed in random order first (each node freed with")
            .append(" probability 1/2), then allocated and linked anew. ns per node visited; near links: share of")
            .append(" links pointing less than 4 KiB forward.\n");
        b.append("- **MemoryBenchmark** (`burst`): 131,072 buffers of the size mix allocated and kept, then idle")
            .append(" 2.5 s; RSS growth and reserved bytes as ratios to the bytes asked for; then all released, idle")
            .append(" again, measured again. Heap pre-touched (`-Xms256m -Xmx256m -XX:+AlwaysPreTouch`).\n\n");
        b.append("Allocators:\n\n");
        b.append("- `jdk`: `ByteBuffer.allocateDirect` + `Unsafe.invokeCleaner`.\n");
        b.append("- `kmem4jAgent`: the same code, in a fork started with `-javaagent:agent/target/kmem4j-agent.jar`:")
            .append(" the agent rewrote `allocateDirect`, default configuration.\n");
        b.append("- `kmem4jTracked`: `SlabAllocator.allocate` (buffer with a JDK cleaner) + `Unsafe.invokeCleaner`,")
            .append(" default configuration (`zeroOnFree=true`), in a fork with the agent, whose rewrite of the JDK")
            .append(" cleaner's `clean()` keeps the cleaners out of the JDK's list (the owned lifecycle).\n");
        b.append("- `kmem4jExplicit`: `SlabAllocator.allocateExplicit` (no cleaner) + `SlabAllocator.free`.\n");
        b.append("- `kmem4jTrackedZeroOnAlloc`, `kmem4jExplicitZeroOnAlloc` (ring, `--full` only): `zeroOnFree=false`.\n");
        b.append("- `nettyPooled`: `PooledByteBufAllocator.DEFAULT.directBuffer(size, size)` + `release()`.\n");
        b.append("- `nettyAdaptive`: `new AdaptiveByteBufAllocator().directBuffer(size, size)` + `release()`.\n");
        b.append("- `kmem4jNetty`: the code of `nettyPooled`, in a fork started with")
            .append(" `-javaagent:agent/target/kmem4j-agent.jar=presets=netty-allocator`: kmem4j's blocks under Netty's")
            .append(" `ByteBuf`s, a released buffer kept by its thread for reuse (what the option does for a Netty server).\n");
        b.append("- `unsafe`: `Unsafe.allocateMemory` + `setMemory` / `freeMemory` (malloc/free, no buffer object).\n");
        b.append("- `floor`: a pop from a per-thread `long[]` free stack over one pre-allocated region, zeroing, and the")
            .append(" JDK's mapped `DirectByteBuffer` constructor with a cleaner whose runnable pushes the block back:")
            .append(" the least a tracked-buffer allocator can cost on this JDK (LIFO: also the chain's scattered")
            .append(" baseline).\n\n");
        b.append("All allocators hand out zero-filled memory except Netty's and `kmem4jNetty` (not zeroed, Netty's pooled contract). Netty runs with its defaults")
            .append(" except that its leak detector is disabled (`-Dio.netty.leakDetection.level=disabled`).\n\n");
        b.append("The quick profile runs `ring1` at 256 B and 4 KiB, `ring2` at 256 B, producer/consumer at 256 B and 4 KiB, the")
            .append(" chain after churn, no zero-on-allocation variants; `--full` runs every parameter of every")
            .append(" workload (64 KiB rings, `ring2` at every size, the fresh chain).\n\n");
        b.append("## How to reproduce\n\n```sh\n");
        b.append("benchmarks/run            # quick profile: builds the agent and the benchmark jar, runs, rewrites BENCHMARKS.md\n");
        b.append("benchmarks/run --full     # every parameter, 2 rounds of one fork\n");
        b.append("benchmarks/run --smoke    # a few hundred ms each: checks that every benchmark runs (CI)\n");
        b.append("benchmarks/run --include RingBenchmark.ring1 --size 256 --allocator jdk,kmem4jAgent,kmem4jTracked,floor\n");
        b.append("# or JMH directly (JSON with -rf json); the agent flavour needs the agent in its fork:\n");
        b.append("java -jar benchmarks/target/kmem4j-benchmarks.jar RingBenchmark.ring1 -p size=256 -p allocator=kmem4jAgent \\\n");
        b.append("    -jvmArgsPrepend -javaagent:agent/target/kmem4j-agent.jar -wi 1 -i 3 -w 1s -r 1s -f 1\n");
        b.append("```\n\nThe build: `./mvnw -B -q -pl agent,benchmarks -am -DskipTests package`."
            + " Raw JMH JSON and output go to `benchmarks/target/jmh-results/`. This file is regenerated up to the"
            + " marker below; the sections after it are hand-written and kept.\n\n");
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
            final StringBuilder b = new StringBuilder(Row.shortName(p.getBenchmark())).append(" threads=")
                .append(p.getThreads());
            for (final String k : p.getParamsKeys()) {
                b.append(' ').append(k).append('=').append(p.getParam(k));
            }
            return b.toString();
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
