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
 * The JDKs the integration tests run forked JVMs on.
 *
 * <p>Candidates, in this order: the JDK running the tests ({@code java.home}), the standard
 * locations in {@link #STANDARD_LOCATIONS}, then any JAVA_HOMEs listed (colon-separated) in the
 * environment variable {@value #ENV_VAR} and the system property {@value #SYSTEM_PROPERTY}.
 * Candidates are deduplicated by real path; only feature versions {@value #MIN_FEATURE}..{@value
 * #MAX_FEATURE} are supported. Every skipped candidate is reported on stdout with the prefix
 * {@value #LOG_PREFIX} so CI logs show which JDKs were (not) covered.
 *
 * <p>Use as {@code @MethodSource("io.kmem4j.it.TestJdks#all")}.
 */
public final class TestJdks {

    public static final String ENV_VAR = "KMEM4J_TEST_JDKS";
    public static final String SYSTEM_PROPERTY = "kmem4j.test.jdks";
    public static final int MIN_FEATURE = 17;
    public static final int MAX_FEATURE = 25;
    static final String LOG_PREFIX = "[kmem4j-it] ";

    /** Locations CI is expected to provide, with the feature version expected there. */
    static final Map<Path, Integer> STANDARD_LOCATIONS =
            Map.of(Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"), 25);

    private static final Pattern JAVA_VERSION = Pattern.compile("^JAVA_VERSION=\"?([^\"]+)\"?\\s*$");

    private static volatile List<Jdk> discovered;

    private TestJdks() {
    }

    /** All supported JDKs, ordered by feature version. Discovery runs (and logs) only once. */
    public static Stream<Jdk> all() {
        List<Jdk> jdks = discovered;
        if (jdks == null) {
            synchronized (TestJdks.class) {
                jdks = discovered;
                if (jdks == null) {
                    jdks = discover();
                    discovered = jdks;
                }
            }
        }
        return jdks.stream();
    }

    private static List<Jdk> discover() {
        Map<Path, Jdk> byRealPath = new LinkedHashMap<>();

        Path current = Path.of(System.getProperty("java.home"));
        // Its release file is authoritative too; Runtime.version() only if the file is missing.
        Runtime.Version runtime = Runtime.version();
        consider(byRealPath, current, "the test JVM (java.home)",
                new Jdk(realPath(current), runtime.version().stream().map(String::valueOf)
                        .reduce((a, b) -> a + "." + b).orElse(String.valueOf(runtime.feature())),
                        runtime.feature()));

        STANDARD_LOCATIONS.entrySet().stream()
                .sorted(Map.Entry.comparingByValue())
                .forEach(e -> {
                    if (!Files.isDirectory(e.getKey())) {
                        log("skipping JDK " + e.getValue() + ": " + e.getKey() + " not found");
                    } else {
                        consider(byRealPath, e.getKey(), "standard location", null);
                    }
                });

        for (String entry : split(System.getenv(ENV_VAR))) {
            consider(byRealPath, Path.of(entry), "$" + ENV_VAR, null);
        }
        for (String entry : split(System.getProperty(SYSTEM_PROPERTY))) {
            consider(byRealPath, Path.of(entry), "-D" + SYSTEM_PROPERTY, null);
        }

        List<Jdk> result = new ArrayList<>(byRealPath.values());
        result.sort(Comparator.comparingInt(Jdk::feature).thenComparing(j -> j.home().toString()));
        for (Jdk jdk : result) {
            log("testing on " + jdk);
        }
        return List.copyOf(result);
    }

    private static void consider(Map<Path, Jdk> byRealPath, Path home, String source, Jdk fallback) {
        if (!Files.isDirectory(home)) {
            log("skipping " + home + " (from " + source + "): not found");
            return;
        }
        Path real = realPath(home);
        if (byRealPath.containsKey(real)) {
            return; // duplicate (e.g. a symlink to a JDK we already have): silently deduplicated
        }
        Optional<String> version = readReleaseVersion(real);
        Jdk jdk;
        if (version.isPresent()) {
            jdk = new Jdk(real, version.get(), featureOf(version.get()));
        } else if (fallback != null) {
            jdk = fallback;
        } else {
            log("skipping " + home + " (from " + source + "): no JAVA_VERSION in " + real.resolve("release"));
            return;
        }
        if (jdk.feature() < MIN_FEATURE || jdk.feature() > MAX_FEATURE) {
            log("skipping JDK " + jdk.version() + " at " + home + " (from " + source + "): only "
                    + MIN_FEATURE + ".." + MAX_FEATURE + " are supported");
            return;
        }
        if (!Files.isExecutable(jdk.javaExecutable())) {
            log("skipping JDK " + jdk.feature() + ": " + jdk.javaExecutable() + " is not executable");
            return;
        }
        byRealPath.put(real, jdk);
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
            for (String part : value.split(":")) {
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

    private static void log(String message) {
        System.out.println(LOG_PREFIX + message);
    }
}
