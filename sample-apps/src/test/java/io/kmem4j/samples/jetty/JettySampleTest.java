package io.kmem4j.samples.jetty;

import static org.assertj.core.api.Assertions.assertThat;

import io.kmem4j.samples.SampleRun;
import io.kmem4j.samples.support.GeneratedContent;
import io.kmem4j.samples.support.Payload;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JettySampleTest {

    @Test
    void servesAndVerifiesEveryBody() {
        SampleRun run = SampleRun.execute(new JettySample(), "--requests", "61", "--connections", "3");

        assertThat(run.exitCode()).as("%s", run).isZero();
        Map<String, String> result = run.values("jetty: requests=");
        assertThat(result)
                .containsEntry("requests", "61")
                .containsEntry("connections", "3")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        assertThat(Long.parseLong(result.get("bytes"))).isBetween(61L * 128, 61L * 200_000);
        assertThat(run.values("jetty: throughput ")).containsKeys("requests/s", "MiB/s", "elapsed_ms");
        assertThat(run.err()).contains("jetty: server buffer pool ");
    }

    @Test
    void sameSeedRequestsTheSameResourcesOverNettyAndJetty() {
        String jetty = SampleRun.execute(new JettySample(), "--requests", "20", "--connections", "2")
                .line("jetty: requests=");
        String netty = SampleRun.execute(new io.kmem4j.samples.nettyhttp.NettyHttpSample(),
                "--requests", "20", "--connections", "2").line("netty-http: requests=");
        assertThat(jetty.substring("jetty: ".length())).isEqualTo(netty.substring("netty-http: ".length()));
    }

    @Test
    void serverAnswersOtherClientsAndUnknownPaths() throws Exception {
        try (JettyContentServer server = JettyContentServer.start("127.0.0.1", 8)) {
            HttpClient client = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + server.address().getPort());

            // larger than one chunk, and not a multiple of 8
            int size = 2 * JettyContentServer.CHUNK_BYTES + 13;
            HttpResponse<byte[]> ok = client.send(
                    HttpRequest.newBuilder(base.resolve("/content/" + size + "/5")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).hasSize(size);
            assertThat(Payload.countMismatches(ByteBuffer.wrap(ok.body()), 0, size,
                    GeneratedContent.seed(size, 5))).isZero();

            HttpResponse<byte[]> missing = client.send(HttpRequest.newBuilder(base.resolve("/nothing")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(missing.statusCode()).isEqualTo(404);
        }
    }
}
