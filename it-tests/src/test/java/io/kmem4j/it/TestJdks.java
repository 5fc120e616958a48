package io.kmem4j.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The JDKs the integration tests run forked JVMs on, in two tiers: the <em>full</em> suite runs on
 * {@link #full()}, the smoke set (contract, echo under the agent with JMX, Netty preset, dynamic
 * attach, slabtop, JFR, the fallback when off) on {@link #all()}, which adds the smoke-only JDKs.
 *
 * <p>Candidates, in this order: the JDK running the tests ({@code java.home}), the standard
 * locations in {@link #STANDARD_LOCATIONS}, then the JDK homes listed (comma-separated; a colon
 * separates too) in the environment variable {@value #ENV_VAR} and the system property
 * {@value #SYSTEM_PROPERTY}: these run the full suite; then the homes in {@value #SMOKE_ENV_VAR} and
 * {@value #SMOKE_SYSTEM_PROPERTY}: these run the smoke set only (a JDK listed in both runs the full
 * suite). Candidates are deduplicated by real path; only feature versions {@value #MIN_FEATURE}..{@value
 * #MAX_FEATURE} are supported. {@value #ONLY_PROPERTY} (feature versions, comma-separated) keeps only
 * those. Every JDK used and every candidate skipped is reported on stdout with the prefix
 * {@value #LOG_PREFIX} so CI logs show which JDKs were (not) covered; {@link MatrixReport} prints, at
 * the end, which test classes ran on each.
 *
 * <p>Use as {@code @MethodSource("io.kmem4j.it.TestJdks#full")} or {@code ...#all} (smoke set).
 */
public final class TestJdks {

    public static final String ENV_VAR = "KMEM4J_TEST_JDKS";
    public static final String SYSTEM_PROPERTY = "kmem4j.test.jdks";
    public static final String SMOKE_ENV_VAR = "KMEM4J_SMOKE_JDKS";
    public static final String SMOKE_SYSTEM_PROPERTY = "kmem4j.smoke.jdks";
    public static final String ONLY_PROPERTY = "kmem4j.test.only";
    public static final int MIN_FEATURE = 17;
    public static final int MAX_FEATURE = 27;
    static final String LOG_PREFIX = "[kmem4j-it] ";

    /** Locations CI is expected to provide, with the feature version expected there. */
    static final Map<Path, Integer> STANDARD_LOCATIONS =
            Map.of(Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"), 25);

    private static final Pattern JAVA_VERSION = Pattern.compile("^JAVA_VERSION=\"?([^\"]+)\"?\\s*$");

    /** One JDK the tests use and its tier. */
    record Entry(Jdk jdk, boolean full) {
    }

    private static volatile List<Entry> discovered;
    private static final List<String> SKIPPED = new ArrayList<>();

    private TestJdks() {
    }

    /** The JDKs of the full suite, ordered by feature version. Discovery runs (and logs) only once. */
    public static Stream<Jdk> full() {
        return entries().stream().filter(Entry::full).map(Entry::jdk);
    }

    /** Every JDK: the full suite's and the smoke-only ones, ordered by feature version (the smoke set). */
    public static Stream<Jdk> all() {
        return entries().stream().map(Entry::jdk);
    }

    /** Every JDK and its tier. */
    static List<Entry> entries() {
        List<Entry> jdks = discovered;
        if (jdks == null) {
            synchronized (TestJdks.class) {
                jdks = discovered;
                if (jdks == null) {
                    jdks = discover();
                    discovered = jdks;
                }
            }
        }
        return jdks;
    }

    /** The candidates that were skipped, one line each (as logged). */
    static synchronized List<String> skipped() {
        entries();
        return List.copyOf(SKIPPED);
    }

    private static List<Entry> discover() {
        Map<Path, Entry> byRealPath = new LinkedHashMap<>();

        Path current = Path.of(System.getProperty("java.home"));
        // Its release file is authoritative too; Runtime.version() only if the file is missing.
        Runtime.Version runtime = Runtime.version();
        consider(byRealPath, current, "the test JVM (java.home)",
                new Jdk(realPath(current), runtime.version().stream().map(String::valueOf)
                        .reduce((a, b) -> a + "." + b).orElse(String.valueOf(runtime.feature())),
                        runtime.feature()), true);

        STANDARD_LOCATIONS.entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .forEach(e -> {
                    if (!Files.isDirectory(e.getKey())) {
                        skip("JDK " + e.getValue() + ": " + e.getKey() + " not found");
                    } else {
                        consider(byRealPath, e.getKey(), "standard location", null, true);
                    }
                });

        for (String entry : split(System.getenv(ENV_VAR))) {
            consider(byRealPath, Path.of(entry), "$" + ENV_VAR, null, true);
        }
        for (String entry : split(System.getProperty(SYSTEM_PROPERTY))) {
            consider(byRealPath, Path.of(entry), "-D" + SYSTEM_PROPERTY, null, true);
        }
        for (String entry : split(System.getenv(SMOKE_ENV_VAR))) {
            consider(byRealPath, Path.of(entry), "$" + SMOKE_ENV_VAR, null, false);
        }
        for (String entry : split(System.getProperty(SMOKE_SYSTEM_PROPERTY))) {
            consider(byRealPath, Path.of(entry), "-D" + SMOKE_SYSTEM_PROPERTY, null, false);
        }

        List<String> only = split(System.getProperty(ONLY_PROPERTY));
        List<Entry> result = new ArrayList<>();
        for (Entry e : byRealPath.values()) {
            if (only.isEmpty() || only.contains(String.valueOf(e.jdk().feature()))) {
                result.add(e);
            } else {
                skip("JDK " + e.jdk().version() + " at " + e.jdk().home() + ": not in -D" + ONLY_PROPERTY + "="
                        + String.join(",", only));
            }
        }
        result.sort(Comparator.comparingInt((Entry e) -> e.jdk().feature()).thenComparing(e -> e.jdk().home().toString()));
        for (Entry e : result) {
            log("testing on " + e.jdk() + (e.full() ? ": full suite" : ": smoke set"));
        }
        return List.copyOf(result);
    }

    private static void consider(Map<Path, Entry> byRealPath, Path home, String source, Jdk fallback, boolean full) {
        if (!Files.isDirectory(home)) {
            skip(home + " (from " + source + "): not found");
            return;
        }
        Path real = realPath(home);
        Entry known = byRealPath.get(real);
        if (known != null) {
            if (full && !known.full()) {
                byRealPath.put(real, new Entry(known.jdk(), true));
            }
            return; // duplicate (e.g. a symlink to a JDK we already have): silently deduplicated
        }
        Optional<String> version = readReleaseVersion(real);
        Jdk jdk;
        if (version.isPresent()) {
            jdk = new Jdk(real, version.get(), featureOf(version.get()));
        } else if (fallback != null) {
            jdk = fallback;
        } else {
            skip(home + " (from " + source + "): no JAVA_VERSION in " + real.resolve("release"));
            return;
        }
        if (jdk.feature() < MIN_FEATURE || jdk.feature() > MAX_FEATURE) {
            skip("JDK " + jdk.version() + " at " + home + " (from " + source + "): only "
                    + MIN_FEATURE + ".." + MAX_FEATURE + " are supported");
            return;
        }
        if (!Files.isExecutable(jdk.javaExecutable())) {
            skip("JDK " + jdk.feature() + ": " + jdk.javaExecutable() + " is not executable");
            return;
        }
        byRealPath.put(real, new Entry(jdk, full));
    }

    /** The {@code JAVA_VERSION} of {@code <home>/release}, if present. */
    static Optional<String> readReleaseVersion(Path home) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release)) {
            return Optional.empty();
        }
        try {
            for (String line : Files.readAllLines(release, StandardCharsets.UTF_8)) {
                Matcher m = JAVA_VERSION.matcher(line.trim());
                if (m.matches()) {
                    return Optional.of(m.group(1));
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + release, e);
        }
    }

    /** {@code "17.0.15"} -> 17, {@code "25"} -> 25, {@code "26-ea"} -> 26, {@code "1.8.0_402"} -> 8. */
    static int featureOf(String version) {
        String v = version.startsWith("1.") ? version.substring(2) : version;
        int end = 0;
        while (end < v.length() && Character.isDigit(v.charAt(end))) {
            end++;
        }
        if (end == 0) {
            return -1;
        }
        return Integer.parseInt(v.substring(0, end));
    }

    private static List<String> split(String value) {
        List<String> parts = new ArrayList<>();
        if (value != null) {
            for (String part : value.split("[,:]")) {
                if (!part.isBlank()) {
                    parts.add(part.trim());
                }
            }
        }
        return parts;
    }

    private static Path realPath(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    private static void skip(String message) {
        synchronized (TestJdks.class) {
            SKIPPED.add(message);
        }
        log("skipping " + message);
    }

    private static void log(String message) {
        System.out.println(LOG_PREFIX + message);
    }
}
