package io.kmem4j.samples.nettyhttp;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NettyHttpSampleTest {

    @Test
    void servesAndVerifiesEveryBody() {
        SampleRun run = SampleRun.execute(new NettyHttpSample(), "--requests", "61", "--connections", "3");

        assertThat(run.exitCode()).as("%s", run).isZero();
        Map<String, String> result = run.values("netty-http: requests=");
        assertThat(result)
                .containsEntry("requests", "61")
                .containsEntry("connections", "3")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        assertThat(Long.parseLong(result.get("bytes"))).isBetween(61L * 128, 61L * 200_000);
        assertThat(run.values("netty-http: throughput ")).containsKeys("requests/s", "MiB/s", "elapsed_ms");
        assertThat(run.err()).contains("netty-http: allocator ");
    }

    @Test
    void moreConnectionsThanRequests() {
        SampleRun run = SampleRun.execute(new NettyHttpSample(), "--requests", "2", "--connections", "4");
        assertThat(run.exitCode()).as("%s", run).isZero();
        assertThat(run.values("netty-http: requests=")).containsEntry("requests", "2")
                .containsEntry("verified", "true");
    }

    @Test
    void serverAnswersOtherClientsAndUnknownPaths() throws Exception {
        try (NettyContentServer server = NettyContentServer.start(InetAddress.getLoopbackAddress(), 1)) {
            HttpClient client = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + server.address().getPort());

            HttpResponse<byte[]> ok = client.send(HttpRequest.newBuilder(base.resolve("/content/1001/3")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).hasSize(1001);
            assertThat(Payload.countMismatches(ByteBuffer.wrap(ok.body()), 0, 1001,
                    GeneratedContent.seed(1001, 3))).isZero();

            HttpResponse<byte[]> missing = client.send(HttpRequest.newBuilder(base.resolve("/nothing")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(missing.statusCode()).isEqualTo(404);
        }
    }
}
