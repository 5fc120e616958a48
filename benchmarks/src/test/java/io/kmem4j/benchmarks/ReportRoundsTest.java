package io.kmem4j.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** How {@link Report} combines rounds of one fork each: the merged rows, and the goals' ratios within a round. */
class ReportRoundsTest {

    private static Row row(final String benchmark, final String allocator, final int threads, final double... iterations) {
        final double mean = java.util.Arrays.stream(iterations).average().orElse(Double.NaN);
        return new Row(benchmark, Map.of("size", "256"), threads, allocator, mean, 1.0, "ns/op",
            Map.of("side", mean / 2), List.of(iterations));
    }

    @Test
    void roundsOfTheSameWorkloadAndAllocatorBecomeOneRowWithEveryForkInOrder() {
        final Row r1 = row("RingBenchmark.ring1", "jdk", 1, 100, 110);
        final Row other = row("RingBenchmark.ring1", "kmem4jTracked", 1, 50, 50);
        final Row r2 = row("RingBenchmark.ring1", "jdk", 1, 300, 310);

        final List<Row> merged = Row.merge(List.of(r1, other, r2));

        assertThat(merged).hasSize(2);
        final Row jdk = merged.get(0);
        assertThat(jdk.allocator()).isEqualTo("jdk");
        assertThat(jdk.forkScores()).containsExactly(105.0, 305.0);
        assertThat(jdk.score()).as("the mean of every iteration, as JMH reports several forks").isEqualTo(205.0);
        assertThat(jdk.error()).as("JMH's 99.9 % half-width over the four iterations").isGreaterThan(100.0);
        assertThat(jdk.secondary().get("side")).isEqualTo((52.5 + 152.5) / 2);
        assertThat(merged.get(1)).as("a row seen once is kept as JMH wrote it").isSameAs(other);
    }

    @Test
    void theSameBenchmarkAtAnotherThreadCountStaysApart() {
        final List<Row> merged = Row.merge(List.of(row("ContentionBenchmark.x", "jdk", 1, 10),
            row("ContentionBenchmark.x", "jdk", 2, 20)));

        assertThat(merged).hasSize(2);
    }

    @Test
    void aGoalWithRoundsIsTheMedianOfTheRatiosWithinARoundWithTheLowestAndHighest() {
        // round 2 ran on a host twice as slow for both allocators: the ratio of the means would mix rounds
        final Row jdk = Row.merge(List.of(row("RingBenchmark.ring1", "jdk", 1, 200), row("RingBenchmark.ring1", "jdk", 1, 400),
            row("RingBenchmark.ring1", "jdk", 1, 210))).get(0);
        final Row kmem4j = Row.merge(List.of(row("RingBenchmark.ring1", "k", 1, 100), row("RingBenchmark.ring1", "k", 1, 250),
            row("RingBenchmark.ring1", "k", 1, 140))).get(0);

        final ReportTables.Ratio r = ReportTables.Ratio.of(Optional.of(jdk), Optional.of(kmem4j), 1);

        assertThat(r.value()).isCloseTo(1.6, within(1e-9)); // 2.0, 1.6, 1.5
        assertThat(r.text()).isEqualTo("1.60× (1.50–2.00×)");
    }

    @Test
    void withoutRoundsOrWithUnevenForksAGoalIsTheRatioOfTheScores() {
        final Row one = row("RingBenchmark.ring1", "jdk", 1, 200, 220);
        final Row two = row("RingBenchmark.ring2", "jdk", 2, 300, 330);

        final ReportTables.Ratio single = ReportTables.Ratio.of(Optional.of(one), Optional.of(two), 2);
        assertThat(single.value()).isCloseTo(2 * 210.0 / 315.0, within(1e-9));
        assertThat(single.text()).isEqualTo("1.33×");

        final Row twoForks = Row.merge(List.of(row("RingBenchmark.ring2", "jdk", 2, 300), row("RingBenchmark.ring2", "jdk", 2, 330)))
            .get(0);
        final Row threeForks = Row.merge(List.of(row("RingBenchmark.ring1", "jdk", 1, 200), row("RingBenchmark.ring1", "jdk", 1, 210),
            row("RingBenchmark.ring1", "jdk", 1, 220))).get(0);
        assertThat(ReportTables.Ratio.of(Optional.of(threeForks), Optional.of(twoForks), 1).text())
            .as("uneven forks cannot be paired by round").isEqualTo(String.format(java.util.Locale.ROOT, "%.2f×", 210.0 / 315.0));
        assertThat(ReportTables.Ratio.of(Optional.empty(), Optional.of(one), 1)).isNull();
    }

    @Test
    void inOddRoundsABenchmarksAgentForksRunBeforeItsPlainOnes() {
        final Report.Plan ring1 = new Report.Plan(RingBenchmark.class, "ring1", Map.of(), false);
        final Report.Plan ring1Agent = new Report.Plan(RingBenchmark.class, "ring1", Map.of(), true);
        final Report.Plan ring2 = new Report.Plan(RingBenchmark.class, "ring2", Map.of(), false);
        final Report.Plan gcAgent = new Report.Plan(GcOnlyBenchmark.class, "dropped", Map.of(), true);
        final Report.Plan gc = new Report.Plan(GcOnlyBenchmark.class, "dropped", Map.of(), false);
        final List<Report.Plan> plans = List.of(ring1, ring1Agent, ring2, gcAgent, gc);

        assertThat(Report.roundOrder(plans, 0)).containsExactlyElementsOf(plans);
        assertThat(Report.roundOrder(plans, 1)).containsExactly(ring1Agent, ring1, ring2, gc, gcAgent);
        assertThat(Report.roundOrder(plans, 2)).containsExactlyElementsOf(plans);
    }
}
