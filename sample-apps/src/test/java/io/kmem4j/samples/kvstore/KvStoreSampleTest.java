package io.kmem4j.samples.kvstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class KvStoreSampleTest {

    @Test
    void runsTheMixedWorkloadAndVerifiesEveryRead() {
        SampleRun run = SampleRun.execute(new KvStoreSample(), "--ops", "20001", "--threads", "3",
                "--keys", "500");

        assertThat(run.exitCode()).as("%s", run).isZero();
        Map<String, String> result = run.values("kvstore: ops=");
        assertThat(result)
                .containsEntry("ops", "20001")
                .containsEntry("threads", "3")
                .containsEntry("keys", "500")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        long gets = Long.parseLong(result.get("gets"));
        long puts = Long.parseLong(result.get("puts"));
        long deletes = Long.parseLong(result.get("deletes"));
        assertThat(gets + puts + deletes).isEqualTo(20001);
        assertThat(gets).isBetween(13000L, 15000L);
        assertThat(puts).isBetween(3500L, 4500L);
        assertThat(run.values("kvstore: throughput ")).containsKeys("ops/s", "elapsed_ms");
        assertThat(run.err()).contains("hits=");
    }

    @Test
    void sameSeedRunsTheSameOperations() {
        String first = SampleRun.execute(new KvStoreSample(), "--ops", "3000", "--keys", "50")
                .line("kvstore: ops=");
        assertThat(SampleRun.execute(new KvStoreSample(), "--ops", "3000", "--keys", "50")
                .line("kvstore: ops=")).isEqualTo(first);
    }

    @Test
    void rejectsAMixOverOneHundredPercent() {
        SampleRun run = SampleRun.execute(new KvStoreSample(), "--get-percent", "90", "--put-percent", "20");
        assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run.err()).contains("--get-percent");
    }
}
