package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the agent adds to JVM start-up: {@code io.kmem4j.it.apps.HelloApp} (prints {@code hello})
 * {@value #RUNS} times without and {@value #RUNS} times with {@code -javaagent}, interleaved, after
 * one unmeasured warm-up run of each (file cache). Prints the medians; asserts nothing about time,
 * only that every run printed {@code hello} and exited 0.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StartupTimeIT {

    private static final int RUNS = 5;
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(30);
    private static final String HELLO_APP = "io.kmem4j.it.apps.HelloApp";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void startupTimeWithAndWithoutTheAgent(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        List<String> withAgent = List.of(AppRun.javaagent(null));

        run(jdk, "hello-warmup-plain", List.of(), cp);
        run(jdk, "hello-warmup-agent", withAgent, cp);

        List<Long> plainNanos = new ArrayList<>();
        List<Long> agentNanos = new ArrayList<>();
        for (int i = 0; i < RUNS; i++) {
            plainNanos.add(run(jdk, "hello-plain", List.of(), cp).wallNanos());
            agentNanos.add(run(jdk, "hello-agent", withAgent, cp).wallNanos());
        }
        double without = median(plainNanos) / 1e6;
        double with = median(agentNanos) / 1e6;
        System.out.println(String.format(Locale.ROOT,
                "%sstartup JDK %s: median without=%.0f ms, with agent=%.0f ms, added=%.0f ms", TestJdks.LOG_PREFIX,
                jdk.version(), without, with, with - without));
        System.out.println(TestJdks.LOG_PREFIX + "startup JDK " + jdk.version() + " runs (ms): without="
                + millis(plainNanos) + " with agent=" + millis(agentNanos));
    }

    private static AppRun run(Jdk jdk, String name, List<String> jvmArgs, String cp) {
        AppRun run = AppRun.run(jdk, name + "-" + jdk.label(), jvmArgs, cp, HELLO_APP, RUN_TIMEOUT);
        assertThat(run.exit()).as("exit code of %s\n%s", run, run.description()).isZero();
        assertThat(run.stdout()).as("stdout of %s\n%s", run, run.description()).containsExactly("hello");
        return run;
    }

    private static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }

    private static List<Long> millis(List<Long> nanos) {
        List<Long> ms = new ArrayList<>();
        for (long n : nanos) {
            ms.add(n / 1_000_000);
        }
        return ms;
    }
}
