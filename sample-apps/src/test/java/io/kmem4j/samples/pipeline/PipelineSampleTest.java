package io.kmem4j.samples.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class PipelineSampleTest {

    @Test
    void verifiesAndReleasesEveryItem() {
        SampleRun run = SampleRun.execute(new PipelineSample(), "--items", "2001", "--producers", "3",
                "--consumers", "2", "--queue-capacity", "4");

        assertThat(run.exitCode()).as("%s", run).isZero();
        Map<String, String> result = run.values("pipeline: items=");
        assertThat(result)
                .containsEntry("items", "2001")
                .containsEntry("producers", "3")
                .containsEntry("consumers", "2")
                .containsEntry("verified", "true")
                .containsEntry("corrupt", "0");
        // every 4th item of each producer (667, 667, 667 items) is dropped: 166 * 3
        assertThat(result).containsEntry("dropped", "498").containsEntry("freed", "1503");
        assertThat(Long.parseLong(result.get("bytes"))).isBetween(2001L * 256, 2001L * 16384);
        assertThat(run.values("pipeline: throughput ")).containsKeys("items/s", "MiB/s", "elapsed_ms");
        assertThat(run.out()).doesNotContain("holding");
    }

    @Test
    void sameSeedMakesTheSameItems() {
        String first = SampleRun.execute(new PipelineSample(), "--items", "300", "--seed", "7")
                .line("pipeline: items=");
        String second = SampleRun.execute(new PipelineSample(), "--items", "300", "--seed", "7",
                "--consumers", "1").line("pipeline: items=");
        assertThat(second.replace("consumers=1", "consumers=2")).isEqualTo(first);
    }

    @Test
    void handlesNoItemsAndNoDrops() {
        assertThat(SampleRun.execute(new PipelineSample(), "--items", "0").values("pipeline: items="))
                .containsEntry("items", "0").containsEntry("verified", "true");
        assertThat(SampleRun.execute(new PipelineSample(), "--items", "50", "--drop-every", "0")
                .values("pipeline: items=")).containsEntry("dropped", "0").containsEntry("freed", "50");
    }

    @Test
    void rejectsInvalidOptions() {
        SampleRun run = SampleRun.execute(new PipelineSample(), "--min-size", "10", "--max-size", "9");
        assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run.err()).contains("--min-size");
        assertThat(SampleRun.execute(new PipelineSample(), "--consumers", "0").exitCode())
                .isEqualTo(CommandLine.ExitCode.USAGE);
    }
}
