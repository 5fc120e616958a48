package io.kmem4j.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which callers kmem4j serves, in forked JVMs on each JDK:
 * <ul>
 *   <li>a caller in the <em>platform</em> class loader: the JDK's own HTTP client
 *       ({@code java.net.http}, defined to the platform loader) allocates its TLS read buffers with
 *       {@code allocateDirect} in {@code HttpClientImpl$SSLDirectBufferSupplier.get}; with
 *       {@code siteSampleRate=1} the Allocator bean's {@code outstandingBySite} names that method as
 *       holding kmem4j buffers ({@code io.kmem4j.it.apps.HttpsApp});</li>
 *   <li>caller exclusions: with {@code excludeCallers=io.kmem4j.it.apps.excluded.} a class of that
 *       package gets JDK buffers, while a class elsewhere, and an excluded class calling it (an
 *       indirect caller), get kmem4j's ({@code io.kmem4j.it.apps.ExclusionApp}).</li>
 * </ul>
 * Classes loaded before premain: PoolPairIT (another agent loads an allocateDirect caller and a pool
 * first); child-first loaders: AgentSafetyIT and PoolPairIT; JDK-internal callers on 17 (C6): CasesIT.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CoverageIT {
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    static final String SSL_SITE = "jdk.internal.net.http.HttpClientImpl$SSLDirectBufferSupplier.get(";

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void aCallerInThePlatformClassLoaderIsServed(Jdk jdk) throws Exception {
        try (ForkedJvm jvm = ForkedJvm.builder(jdk, "https-" + jdk.label())
                .jvmArgs(AppRun.javaagent("siteSampleRate=1"))
                .mainClass(AppRun.classpath(AppRun.appClasses()), "io.kmem4j.it.apps.HttpsApp")
                .programArgs("--hold").start()) {
            jvm.awaitStdoutLine("https: holding", RUN_TIMEOUT);
            assertThat(jvm.stdoutLines()).as("stdout of %s\n%s", jvm, jvm.describe())
                    .contains("https: client-loader=platform", "https: ok requests=20 bytes=1310720");
            try (JmxClient jmx = JmxClient.attach(jvm.pid(), jvm + " on " + jdk, Duration.ofSeconds(30))) {
                jmx.awaitRegistered(JmxClient.ALLOCATOR, Duration.ofSeconds(10));
                String sites = (String) jmx.connection().invoke(JmxClient.ALLOCATOR, "outstandingBySite",
                        new Object[] {50}, new String[] {"int"});
                System.out.println(TestJdks.LOG_PREFIX + "HttpsApp on JDK " + jdk.version() + " outstandingBySite:\n"
                        + sites);
                assertThat(sites.lines().filter(l -> l.contains(SSL_SITE)))
                        .as("a site in java.net.http (platform loader) holding kmem4j buffers:\n%s", sites)
                        .singleElement().satisfies(l -> assertThat(l.trim().split("\\s+")[1])
                                .as("live sampled buffers of %s", l).isNotEqualTo("0"));
            }
            jvm.closeStdin();
            assertThat(jvm.waitForExit(RUN_TIMEOUT)).as("exit code of %s\n%s", jvm, jvm.describe()).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kmem4j.it.TestJdks#full")
    void excludedCallersGetJdkBuffersEveryoneElseKmem4js(Jdk jdk) {
        String cp = AppRun.classpath(AppRun.appClasses());
        AppRun plain = AppRun.run(jdk, "exclusion-agent-" + jdk.label(), List.of(AppRun.javaagent(null)), cp,
                "io.kmem4j.it.apps.ExclusionApp", RUN_TIMEOUT);
        assertThat(plain.stdout()).as("without an exclusion\n%s", plain.description())
                .contains("exclusion: excluded=1000 included=1000 indirect=1000", "exclusion: ok");

        AppRun excluded = AppRun.run(jdk, "exclusion-excluded-" + jdk.label(),
                List.of(AppRun.javaagent("excludeCallers=io.kmem4j.it.apps.excluded.,com.example.")), cp,
                "io.kmem4j.it.apps.ExclusionApp", RUN_TIMEOUT);
        assertThat(excluded.exit()).as("exit code of %s\n%s", excluded, excluded.description()).isZero();
        assertThat(excluded.stdout()).as("with excludeCallers\n%s", excluded.description())
                .contains("exclusion: excluded=0 included=1000 indirect=1000", "exclusion: ok");
        assertThat(excluded.stderr()).as("stderr of %s", excluded)
                .allMatch(l -> l.startsWith("[kmem4j] INFO"));
    }
}
