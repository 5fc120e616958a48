package io.kmem4j.samples.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import io.kmem4j.samples.echo.EchoSample;
import io.kmem4j.samples.pipeline.PipelineSample;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --duration}: the workload repeated in rounds until the time has passed, totals reported. */
class RoundsTest {

    @Test
    void withoutDurationOneRoundRuns() throws Exception {
        Rounds rounds = new Rounds();
        List<Integer> seen = new ArrayList<>();
        int total = rounds.run(r -> {
            seen.add(r);
            return 5;
        }, Integer::sum);
        assertThat(seen).containsExactly(0);
        assertThat(total).isEqualTo(5);
        assertThat(rounds.completed()).isEqualTo(1);
    }

    @Test
    void withDurationRoundsRepeatAndAddUp() throws Exception {
        Rounds rounds = new Rounds();
        new CommandLine(new Object() {
            @picocli.CommandLine.Mixin
            Rounds mixin = rounds;
        }).parseArgs("--duration", "1");
        List<Integer> seen = new ArrayList<>();
        int total = rounds.run(r -> {
            seen.add(r);
            Thread.sleep(100);
            return 1;
        }, Integer::sum);
        assertThat(rounds.completed()).isGreaterThan(1).isEqualTo(seen.size()).isEqualTo(total);
        assertThat(seen).startsWith(0, 1);
    }

    @Test
    void pipelineReportsTotalsOverTheRounds() {
        SampleRun run = SampleRun.execute(new PipelineSample(), "--items", "200", "--duration", "1");
        assertThat(run.exitCode()).as("%s", run).isZero();
        int rounds = Integer.parseInt(run.values("pipeline: rounds=").get("rounds"));
        assertThat(rounds).as("%s", run).isGreaterThan(1);
        Map<String, String> result = run.values("pipeline: items=");
        assertThat(result).containsEntry("items", String.valueOf(200L * rounds)).containsEntry("verified", "true")
                .containsEntry("corrupt", "0");
    }

    @Test
    void echoReportsTotalsOverTheRounds() {
        SampleRun run = SampleRun.execute(new EchoSample(), "--messages", "50", "--connections", "2",
                "--duration", "1");
        assertThat(run.exitCode()).as("%s", run).isZero();
        int rounds = Integer.parseInt(run.values("echo: rounds=").get("rounds"));
        assertThat(rounds).as("%s", run).isGreaterThan(1);
        assertThat(run.values("echo: messages=")).containsEntry("messages", String.valueOf(50L * rounds))
                .containsEntry("verified", "true").containsEntry("mismatches", "0");
    }

    @Test
    void aNegativeDurationIsAUsageError() {
        for (Object sample : List.of(new PipelineSample(), new EchoSample())) {
            SampleRun run = SampleRun.execute(sample, "--duration", "-1");
            assertThat(run.exitCode()).as("%s", run).isEqualTo(CommandLine.ExitCode.USAGE);
            assertThat(run.err()).contains("--duration must not be negative");
        }
    }
}
