package io.kmem4j.benchmarks.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class GrpcLoadClientTest {

    @Test
    void optionsHaveDefaultsAndAMisspelledOneIsRefused() {
        final Map<String, String> o = GrpcLoadClient.options(new String[] {"--port", "7", "--calls", "8"});
        assertThat(o).containsEntry("port", "7").containsEntry("calls", "8").containsEntry("channels", "4")
            .containsEntry("method", "small").containsEntry("threads", "1");
        assertThatThrownBy(() -> GrpcLoadClient.options(new String[] {"--calls", "8"})).hasMessageContaining("--port");
        assertThatThrownBy(() -> GrpcLoadClient.options(new String[] {"--port", "7", "--conections", "8"}))
            .hasMessageContaining("--conections");
        assertThatThrownBy(() -> GrpcLoadClient.options(new String[] {"--port"})).hasMessageContaining("incomplete");
    }

    @Test
    void theMethodsAreTheServersAndTheBurstsPathIsTheUploadMethods() {
        assertThat(GrpcMethods.UPLOAD_PATH).isEqualTo("/" + GrpcMethods.UPLOAD.getFullMethodName());
        assertThat(GrpcMethods.forSize("small")).isSameAs(GrpcMethods.SMALL);
        assertThat(GrpcMethods.forSize("mixed")).isSameAs(GrpcMethods.MIXED);
        assertThatThrownBy(() -> GrpcMethods.forSize("large")).hasMessageContaining("unknown size large");
        assertThat(GrpcUnaryServer.service().getMethods()).extracting(m -> m.getMethodDescriptor().getFullMethodName())
            .containsExactlyInAnyOrder("kmem4j.bench.Unary/Small", "kmem4j.bench.Unary/Mixed", "kmem4j.bench.Unary/Upload");
    }
}
