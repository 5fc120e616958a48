package io.kmem4j.samples.dropper;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DropperSampleTest {

    @Test
    void replacesEveryMessageAndChecksTheOneItReplaces() {
        SampleRun run = SampleRun.execute(new DropperSample(), "--messages", "30001", "--threads", "3",
                "--slots", "100", "--size", "256");

        assertThat(run.exitCode()).as("%s", run).isZero();
        Map<String, String> result = run.values("dropper: messages=");
        assertThat(result)
                .containsEntry("messages", "30001")
                .containsEntry("threads", "3")
                .containsEntry("size", "256")
                .containsEntry("slots", "100")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        assertThat(run.values("dropper: throughput ")).containsKeys("messages/s", "elapsed_ms");
    }

    @Test
    void rejectsAMessageTooSmallForItsStamps() {
        SampleRun run = SampleRun.execute(new DropperSample(), "--size", "8");
        assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run.err()).contains("--size");
    }
}
