package io.kmem4j.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.util.ListStatistics;

/** How {@link Report} combines rounds of one fork each: the merged rows, and the goals' ratios within a round. */
class ReportRoundsTest {

    /** A row of one fork that ran in {@code round}, as {@code Report} reads a round's result file. */
    private static Row inRound(final String benchmark, final String allocator, final int threads, final int round,
                               final double... iterations) {
        final double mean = java.util.Arrays.stream(iterations).average().orElse(Double.NaN);
        return new Row(benchmark, Map.of("size", "256"), threads, allocator, mean, 1.0, "ns/op",
            Map.of("side", mean / 2), List.of(iterations), List.of(round));
    }

    /** Rows of one benchmark and allocator, one per round (rounds 1, 2, ...), merged. */
    private static Row rounds(final String benchmark, final String allocator, final double... perRound) {
        final List<Row> rows = new ArrayList<>();
        for (int r = 0; r < perRound.length; r++) {
            rows.add(inRound(benchmark, allocator, 1, r + 1, perRound[r]));
        }
        return Row.merge(rows).get(0);
    }

    @Test
    void roundsOfTheSameWorkloadAndAllocatorBecomeOneRowWithEveryForkInOrder() {
        final Row r1 = inRound("RingBenchmark.ring1", "jdk", 1, 1, 100, 110);
        final Row other = inRound("RingBenchmark.ring1", "kmem4jTracked", 1, 1, 50, 50);
        final Row r2 = inRound("RingBenchmark.ring1", "jdk", 1, 2, 300, 310);

        final List<Row> merged = Row.merge(List.of(r1, other, r2));

        assertThat(merged).hasSize(2);
        final Row jdk = merged.get(0);
        assertThat(jdk.allocator()).isEqualTo("jdk");
        assertThat(jdk.roundScores()).containsExactly(Map.entry(1, 105.0), Map.entry(2, 305.0));
        assertThat(jdk.score()).as("the mean of every iteration, as JMH reports several forks").isEqualTo(205.0);
        assertThat(jdk.error()).as("JMH's 99.9 % half-width over the four iterations")
            .isCloseTo(new ListStatistics(new double[] {100, 110, 300, 310}).getMeanErrorAt(0.999), within(1e-9))
            .isGreaterThan(new ListStatistics(new double[] {100, 110, 300, 310}).getMeanErrorAt(0.99));
        assertThat(jdk.secondary().get("side")).isEqualTo((52.5 + 152.5) / 2);
        assertThat(merged.get(1)).as("a row seen once is kept as JMH wrote it").isSameAs(other);
    }

    @Test
    void theSameBenchmarkAtAnotherThreadCountOrUnitStaysApart() {
        final Row oneThread = inRound("ContentionBenchmark.x", "jdk", 1, 1, 10);
        final Row twoThreads = inRound("ContentionBenchmark.x", "jdk", 2, 1, 20);
        final Row otherUnit = new Row("ContentionBenchmark.x", Map.of("size", "256"), 1, "jdk", 5, 1, "ops/us", Map.of(),
            List.of(new double[] {5}), List.of(2));

        final List<Row> merged = Row.merge(List.of(oneThread, twoThreads, otherUnit));

        assertThat(merged).containsExactly(oneThread, twoThreads, otherUnit);
    }

    @Test
    void aRowWithoutIterationsCountsAtItsScoreAndSecondaryMeansSkipMissingValues() {
        final Row noRaw = new Row("RingBenchmark.ring1", Map.of("size", "256"), 1, "jdk", 400, Double.NaN, "ns/op",
            Map.of("other", 7.0), List.of(), List.of());
        final Row withRaw = inRound("RingBenchmark.ring1", "jdk", 1, 2, 200);

        final Row merged = Row.merge(List.of(noRaw, withRaw)).get(0);

        assertThat(merged.score()).isEqualTo(300.0);
        assertThat(merged.roundScores()).as("only the fork with a round pairs").containsExactly(Map.entry(2, 200.0));
        assertThat(merged.secondary()).containsEntry("other", 7.0).containsEntry("side", 100.0);
    }

    @Test
    void aGoalWithRoundsIsTheMedianOfTheRatiosWithinARoundWithTheLowestAndHighest() {
        // round 2 ran on a host twice as slow for both allocators: the ratio of the means would mix rounds
        final Row jdk = rounds("RingBenchmark.ring1", "jdk", 200, 400, 210);
        final Row kmem4j = rounds("RingBenchmark.ring1", "k", 100, 250, 140);

        final ReportTables.Ratio r = ReportTables.Ratio.of(Optional.of(jdk), Optional.of(kmem4j), 1);

        assertThat(r.value()).isCloseTo(1.6, within(1e-9)); // 2.0, 1.6, 1.5
        assertThat(r.text()).isEqualTo("1.60× (1.50–2.00×)");
    }

    @Test
    void roundsArePairedByRoundNotByPosition() {
        // the JDK has no result in round 2, kmem4j none in round 3
        final Row jdk = Row.merge(List.of(inRound("RingBenchmark.ring1", "jdk", 1, 1, 200),
            inRound("RingBenchmark.ring1", "jdk", 1, 3, 600), inRound("RingBenchmark.ring1", "jdk", 1, 4, 300))).get(0);
        final Row kmem4j = Row.merge(List.of(inRound("RingBenchmark.ring1", "k", 1, 1, 100),
            inRound("RingBenchmark.ring1", "k", 1, 2, 1000), inRound("RingBenchmark.ring1", "k", 1, 4, 200))).get(0);

        final ReportTables.Ratio r = ReportTables.Ratio.of(Optional.of(jdk), Optional.of(kmem4j), 1);

        assertThat(r.text()).as("rounds 1 and 4 pair: 2.0 and 1.5").isEqualTo("1.75× (1.50–2.00×)");
    }

    @Test
    void withoutRoundsAGoalIsTheRatioOfTheScores() {
        // one JMH run with two forks back to back: its forks ran minutes apart, not in rounds
        final Row oneRun = new Row("RingBenchmark.ring1", Map.of("size", "256"), 1, "jdk", 210, 1, "ns/op", Map.of(),
            List.of(new double[] {200}, new double[] {220}), List.of(Row.NO_ROUND, Row.NO_ROUND));
        final Row two = new Row("RingBenchmark.ring2", Map.of("size", "256"), 2, "jdk", 315, 1, "ns/op", Map.of(),
            List.of(new double[] {300}, new double[] {330}), List.of(Row.NO_ROUND, Row.NO_ROUND));

        final ReportTables.Ratio single = ReportTables.Ratio.of(Optional.of(oneRun), Optional.of(two), 2);
        assertThat(single.value()).isCloseTo(2 * 210.0 / 315.0, within(1e-9));
        assertThat(single.text()).isEqualTo("1.33×");

        final Row oneRound = rounds("RingBenchmark.ring1", "k", 100);
        assertThat(ReportTables.Ratio.of(Optional.of(rounds("RingBenchmark.ring1", "jdk", 150)), Optional.of(oneRound), 1)
            .text()).as("a single round is no spread").isEqualTo("1.50×");
        assertThat(ReportTables.Ratio.of(Optional.empty(), Optional.of(oneRun), 1)).isNull();
    }

    @Test
    void aResultFileNamesItsRound() {
        assertThat(Report.round(Path.of("/tmp/x/full-r2-0-RingBenchmark.ring1.json"))).isEqualTo(2);
        assertThat(Report.round(Path.of("full-r12-3-GcOnlyBenchmark.dropped-agent.json"))).isEqualTo(12);
        assertThat(Report.round(Path.of("full-0-RingBenchmark.ring1.json"))).isEqualTo(Row.NO_ROUND);
    }

    @Test
    void inOddRoundsABenchmarksPlansRunInReverseOrder() {
        final Report.Plan ring1 = new Report.Plan(RingBenchmark.class, "ring1", Map.of(), null);
        final Report.Plan ring1Agent = new Report.Plan(RingBenchmark.class, "ring1", Map.of(), "");
        final Report.Plan ring1Netty = new Report.Plan(RingBenchmark.class, "ring1", Map.of(), Flavour.NETTY_AGENT_OPTIONS);
        final Report.Plan ring2 = new Report.Plan(RingBenchmark.class, "ring2", Map.of(), null);
        final Report.Plan gc = new Report.Plan(GcOnlyBenchmark.class, "dropped", Map.of(), null);
        final Report.Plan gcAgent = new Report.Plan(GcOnlyBenchmark.class, "dropped", Map.of(), "");
        final List<Report.Plan> plans = List.of(ring1, ring1Agent, ring1Netty, ring2, gc, gcAgent);

        assertThat(Report.roundOrder(plans, 0)).containsExactlyElementsOf(plans);
        assertThat(Report.roundOrder(plans, 1)).containsExactly(ring1Netty, ring1Agent, ring1, ring2, gcAgent, gc);
        assertThat(Report.roundOrder(plans, 2)).containsExactlyElementsOf(plans);
    }

    @Test
    void eachKindOfForkIsAPlanOfItsOwn() {
        final List<Report.Plan> plans = Report.parse(List.of("--include", "RingBenchmark.ring1$", "--size", "256",
            "--allocator", "jdk,kmem4jAgent,kmem4jNetty,nettyPooled,kmem4jTracked")).plans();

        assertThat(plans).extracting(p -> p.params().get("allocator"))
            .containsExactly(List.of("jdk", "nettyPooled"), List.of("kmem4jAgent", "kmem4jTracked"), List.of("kmem4jNetty"));
        assertThat(plans).extracting(Report.Plan::agentOptions).containsExactly(null, "", "presets=netty-allocator");
        assertThat(plans).extracting(Report.Plan::fileSuffix)
            .containsExactly("", "-agent", "-agent-presets-netty-allocator");
        assertThat(plans).extracting(Report.Plan::label).containsExactly("", " (agent)", " (agent presets=netty-allocator)");
    }

    @Test
    void roundsAndSavedResultsDoNotMix() {
        assertThatThrownBy(() -> Report.parse(List.of("--rounds", "3", "--from-json", "a.json")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--rounds");
        assertThatThrownBy(() -> Report.parse(List.of("--rounds", "0")))
            .isInstanceOf(IllegalArgumentException.class).hasMessage("--rounds 0: allowed 1 to 100");
    }

    @Test
    void gcOnlyIterationsCoverItsCyclesUnderQuickAndFullButNotSmoke() {
        assertThat(Report.iterationMillis(Report.Profile.FULL, GcOnlyBenchmark.class)).isEqualTo(4000);
        assertThat(Report.warmupMillis(Report.Profile.FULL, GcOnlyBenchmark.class)).isEqualTo(2000);
        assertThat(Report.iterationMillis(Report.Profile.QUICK, GcOnlyBenchmark.class)).isEqualTo(4000);
        assertThat(Report.iterationMillis(Report.Profile.SMOKE, GcOnlyBenchmark.class))
            .isEqualTo(Report.Profile.SMOKE.iterationMillis);
        assertThat(Report.warmupMillis(Report.Profile.SMOKE, GcOnlyBenchmark.class))
            .isEqualTo(Report.Profile.SMOKE.warmupMillis);
        assertThat(Report.timing(Report.Profile.FULL, GcOnlyBenchmark.class))
            .isEqualTo("3 x 2 s warm-up, 5 x 4 s measurement");
        assertThat(Report.timing(Report.Profile.QUICK, GcOnlyBenchmark.class))
            .isEqualTo("1 x 2 s warm-up, 3 x 4 s measurement");
        assertThat(Report.timing(Report.Profile.SMOKE, GcOnlyBenchmark.class))
            .isEqualTo("1 x 200 ms warm-up, 1 x 300 ms measurement");
        // a class without the annotation keeps the profile's times (its own @Measurement is not read)
        assertThat(Report.iterationMillis(Report.Profile.FULL, RingBenchmark.class))
            .isEqualTo(Report.Profile.FULL.iterationMillis);
        assertThat(Report.warmupMillis(Report.Profile.FULL, RingBenchmark.class))
            .isEqualTo(Report.Profile.FULL.warmupMillis);
    }
}
