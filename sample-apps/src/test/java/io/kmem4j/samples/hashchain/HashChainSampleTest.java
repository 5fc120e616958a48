package io.kmem4j.samples.hashchain;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class HashChainSampleTest {

    @Test
    void buildsChurnsVerifiesAndTraverses() {
        SampleRun run = SampleRun.execute(new HashChainSample(), "--nodes", "3001", "--traversals", "3");

        assertThat(run.exitCode()).as("%s", run).isZero();
        assertThat(run.values("hashchain: nodes="))
                .containsEntry("nodes", "3001")
                .containsEntry("buckets", "750")
                .containsEntry("deleted", "1500")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        assertThat(run.values("hashchain: throughput "))
                .containsKeys("traversals/s", "nodes/s", "MiB/s", "traversal_ms", "build_ms", "elapsed_ms");
        // 3001 nodes + 1500 re-inserted, all released at the end
        assertThat(run.err()).contains("released 4501 nodes");
    }

    @Test
    void worksWithOneBucketAndEmptyTables() {
        assertThat(SampleRun.execute(new HashChainSample(), "--nodes", "200", "--load-factor", "1000")
                .values("hashchain: nodes=")).containsEntry("buckets", "1").containsEntry("verified", "true");
        assertThat(SampleRun.execute(new HashChainSample(), "--nodes", "0")
                .values("hashchain: nodes=")).containsEntry("verified", "true");
    }

    @Test
    void rejectsNodesTooSmallForTheHeader() {
        SampleRun run = SampleRun.execute(new HashChainSample(), "--min-size", "19");
        assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(run.err()).contains("--min-size");
    }
}
