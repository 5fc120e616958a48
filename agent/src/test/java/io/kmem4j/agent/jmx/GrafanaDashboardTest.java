package io.kmem4j.agent.jmx;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/grafana-kmem4j.json} over the names the exporter really makes: every metric a panel's
 * query names is one the Prometheus JMX exporter scrapes from kmem4j's beans with
 * {@code docs/prometheus-jmx-exporter.yml} ({@link JmxExporterRulesTest#scrape()}) or one of the JVM
 * buffer-pool metrics it exports beside them (client_java's {@code JvmBufferPoolMetrics}, scraped here
 * too), and every label a query or legend names is on those series (or is a target label, {@code job},
 * {@code instance}). No Grafana library is on Maven Central to load the file as Grafana does; this reads
 * it as JSON and checks the shape Grafana's import needs (uid, title, panels with unique ids, each on the
 * dashboard's {@code datasource} variable, which the templating defines).
 */
class GrafanaDashboardTest {
    private static final File DASHBOARD = new File(System.getProperty("basedir", "."), "../docs/grafana-kmem4j.json");
    private static final Pattern METRIC = Pattern.compile("\\b((?:kmem4j|jvm)_[a-z0-9_]+)\\b");
    private static final Pattern SERIES = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)\\})? \\S+$");
    private static final Pattern SELECTOR = Pattern.compile("((?:kmem4j|jvm)_[a-z0-9_]+)\\{([^}]*)\\}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");
    private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\}\\}");
    private static final Set<String> TARGET_LABELS = Set.of("job", "instance");

    /** Scraped metric name to the label names on its series. */
    private static final Map<String, Set<String>> SCRAPED = new HashMap<>();

    @BeforeAll
    static void scrape() throws Exception {
        JmxExporterRulesTest.register();
        final List<String> lines = new ArrayList<>(JmxExporterRulesTest.scrape());
        final PrometheusRegistry jvm = new PrometheusRegistry();
        JvmBufferPoolMetrics.builder().register(jvm);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PrometheusTextFormatWriter(false).write(out, jvm.scrape());
        lines.addAll(List.of(out.toString(StandardCharsets.UTF_8).split("\n")));
        for (final String line : lines) {
            final Matcher m = SERIES.matcher(line);
            if (m.matches()) {
                final Set<String> labels = SCRAPED.computeIfAbsent(m.group(1), k -> new HashSet<>());
                if (m.group(2) != null) {
                    final Matcher l = MATCHER.matcher(m.group(2));
                    while (l.find()) {
                        labels.add(l.group(1));
                    }
                }
            }
        }
        assertThat(SCRAPED).containsKeys("kmem4j_bytes_reserved", "jvm_buffer_pool_used_bytes");
    }

    @AfterAll
    static void unregister() throws Exception {
        JmxExporterRulesTest.unregister();
    }

    private static JsonObject dashboard() throws Exception {
        return JsonParser.parseString(Files.readString(DASHBOARD.toPath())).getAsJsonObject();
    }

    private static List<JsonObject> targets(final JsonObject dashboard) {
        final List<JsonObject> out = new ArrayList<>();
        for (final JsonElement panel : dashboard.getAsJsonArray("panels")) {
            for (final JsonElement t : panel.getAsJsonObject().getAsJsonArray("targets")) {
                out.add(t.getAsJsonObject());
            }
        }
        return out;
    }

    @Test
    void everyQueryNamesExportedMetricsAndTheirLabels() throws Exception {
        final List<JsonObject> targets = targets(dashboard());
        assertThat(targets).isNotEmpty();
        final Set<String> used = new HashSet<>();
        for (final JsonObject t : targets) {
            final String expr = t.get("expr").getAsString();
            final Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                assertThat(SCRAPED).as("%s in '%s'", m.group(1), expr).containsKey(m.group(1));
                used.add(m.group(1));
            }
            final Matcher s = SELECTOR.matcher(expr);
            while (s.find()) {
                final Matcher l = MATCHER.matcher(s.group(2));
                while (l.find()) {
                    if (!TARGET_LABELS.contains(l.group(1))) {
                        assertThat(SCRAPED.get(s.group(1))).as("label %s of %s in '%s'", l.group(1), s.group(1), expr)
                            .contains(l.group(1));
                    }
                }
            }
            final Matcher legend = LEGEND_LABEL.matcher(t.get("legendFormat").getAsString());
            while (legend.find()) {
                final String label = legend.group(1);
                if (!TARGET_LABELS.contains(label)) {
                    assertThat(used).as("a metric of '%s' carries %s", expr, label)
                        .anySatisfy(metric -> assertThat(expr).contains(metric));
                    final Matcher names = METRIC.matcher(expr);
                    boolean carried = false;
                    while (names.find()) {
                        carried |= SCRAPED.get(names.group(1)).contains(label);
                    }
                    assertThat(carried).as("legend label %s of '%s'", label, expr).isTrue();
                }
            }
        }
        assertThat(used).as("the allocator's headline figures are on the dashboard").contains("kmem4j_enabled",
            "kmem4j_bytes_reserved", "kmem4j_bytes_in_use", "kmem4j_live_buffers", "kmem4j_allocations_total",
            "kmem4j_fallbacks_total", "kmem4j_cache_slab_bytes", "jvm_buffer_pool_used_bytes");
    }

    @Test
    void theShapeGrafanasImportNeeds() throws Exception {
        final JsonObject d = dashboard();
        assertThat(d.get("uid").getAsString()).isEqualTo("kmem4j");
        assertThat(d.get("title").getAsString()).isNotBlank();
        assertThat(d.get("schemaVersion").getAsInt()).isPositive();
        final Set<String> variables = new HashSet<>();
        for (final JsonElement v : d.getAsJsonObject("templating").getAsJsonArray("list")) {
            variables.add(v.getAsJsonObject().get("name").getAsString());
        }
        assertThat(variables).contains("datasource", "job", "instance");
        final Set<Integer> ids = new HashSet<>();
        for (final JsonElement p : d.getAsJsonArray("panels")) {
            final JsonObject panel = p.getAsJsonObject();
            assertThat(ids.add(panel.get("id").getAsInt())).as("unique id %s", panel.get("id")).isTrue();
            assertThat(panel.getAsJsonObject("datasource").get("uid").getAsString()).isEqualTo("${datasource}");
            assertThat(panel.getAsJsonObject("gridPos").keySet()).contains("x", "y", "w", "h");
            for (final JsonElement t : panel.getAsJsonArray("targets")) {
                assertThat(t.getAsJsonObject().get("expr").getAsString()).as(panel.get("title").getAsString())
                    .contains("job=~\"$job\"", "instance=~\"$instance\"");
            }
        }
    }
}
