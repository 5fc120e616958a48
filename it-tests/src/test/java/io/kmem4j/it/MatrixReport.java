package io.kmem4j.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints, when the integration tests end, which test classes ran on which JDK, how many of their
 * tests passed, were skipped (an assumption, e.g. "virtual threads need JDK 21+") or failed, and how
 * long each JDK's tests took (the sum of its tests' wall times: the tests run one after another, so
 * this is the JDK's share of the run), and which JDK candidates were skipped and why
 * ({@link TestJdks}). A test belongs to the JDK whose {@link Jdk#toString()} its display name
 * contains; the rest are JDK-independent. The same text goes to {@value #FILE}.
 *
 * <p>Registered through {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener};
 * Failsafe runs every IT class in one test plan, so it prints once per run.
 */
public final class MatrixReport implements TestExecutionListener {
    static final String FILE = "target/kmem4j-jdk-matrix.txt";
    private static final String INDEPENDENT = "JDK-independent";

    /** Tests of one JDK, per class: passed, skipped, failed. */
    private static final class Row {
        final Map<String, int[]> classes = new TreeMap<>();
        long nanos;

        void add(String testClass, TestExecutionResult.Status status, long elapsed) {
            int[] counts = classes.computeIfAbsent(testClass, k -> new int[3]);
            counts[status == TestExecutionResult.Status.SUCCESSFUL ? 0
                    : status == TestExecutionResult.Status.ABORTED ? 1 : 2]++;
            nanos += elapsed;
        }

        int total(int kind) {
            return classes.values().stream().mapToInt(c -> c[kind]).sum();
        }
    }

    private final Map<String, Long> started = new ConcurrentHashMap<>();
    private final Map<String, Row> rows = new TreeMap<>();
    private boolean any;

    @Override
    public void executionStarted(TestIdentifier id) {
        if (id.isTest()) {
            started.put(id.getUniqueId(), System.nanoTime());
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        Long start = started.remove(id.getUniqueId());
        long elapsed = start == null ? 0 : System.nanoTime() - start;
        String testClass = id.getSource().filter(MethodSource.class::isInstance).map(s -> ((MethodSource) s)
                .getClassName()).map(n -> n.substring(n.lastIndexOf('.') + 1)).orElse(id.getDisplayName());
        synchronized (this) {
            rows.computeIfAbsent(jdkOf(id.getDisplayName()), k -> new Row()).add(testClass, result.getStatus(), elapsed);
            any = true;
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        if (!any) {
            return;
        }
        String report = String.join("\n", lines()) + "\n";
        System.out.print(report);
        System.out.flush();
        try {
            Files.writeString(Path.of(FILE), report);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The report, one line per JDK (ordered by feature version), JDK-independent tests and skipped candidates. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add(TestJdks.LOG_PREFIX + "JDK matrix: test classes run per JDK (tests passed/skipped/failed;"
                + " time = sum of the JDK's tests)");
        for (TestJdks.Entry e : TestJdks.entries()) {
            Row row = rows.get(e.jdk().toString());
            String tier = e.full() ? "full suite" : "smoke set";
            out.add(TestJdks.LOG_PREFIX + "  JDK " + e.jdk().version() + " (" + tier + "): "
                    + (row == null ? "no test ran" : describe(row)));
        }
        Row independent = rows.get(INDEPENDENT);
        if (independent != null) {
            out.add(TestJdks.LOG_PREFIX + "  " + INDEPENDENT + ": " + describe(independent));
        }
        for (String skipped : TestJdks.skipped()) {
            out.add(TestJdks.LOG_PREFIX + "  skipped " + skipped);
        }
        return out;
    }

    private static String describe(Row row) {
        StringBuilder sb = new StringBuilder();
        sb.append(TimeUnit.NANOSECONDS.toSeconds(row.nanos)).append(" s, ").append(row.total(0)).append(" passed, ")
                .append(row.total(1)).append(" skipped, ").append(row.total(2)).append(" failed in ")
                .append(row.classes.size()).append(" classes:");
        row.classes.forEach((name, c) -> {
            sb.append(' ').append(name).append(' ').append(c[0]);
            if (c[1] > 0 || c[2] > 0) {
                sb.append('/').append(c[1]).append('/').append(c[2]);
            }
            sb.append(',');
        });
        sb.setLength(sb.length() - 1);
        return sb.toString();
    }

    /** The {@link Jdk#toString()} the display name contains, or {@value #INDEPENDENT}. */
    private static String jdkOf(String displayName) {
        for (TestJdks.Entry e : TestJdks.entries()) {
            if (displayName.contains(e.jdk().toString())) {
                return e.jdk().toString();
            }
        }
        return INDEPENDENT;
    }
}
