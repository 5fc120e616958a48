package io.kmem4j.samples.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class GeneratedContentTest {

    @Test
    void pathsParseBackToTheirResource() {
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 100; i++) {
            GeneratedContent.Resource resource = GeneratedContent.pick(random);
            assertThat(GeneratedContent.parse(resource.path())).isEqualTo(resource);
            assertThat(resource.size()).isBetween(1, GeneratedContent.MAX_SIZE);
        }
        assertThat(GeneratedContent.parse("/content/0/0")).isEqualTo(new GeneratedContent.Resource(0, 0));
    }

    @Test
    void rejectsOtherPaths() {
        for (String path : new String[] {null, "", "/", "/content/", "/content/12", "/content/x/1",
                "/content/1/x", "/content/-1/1", "/content/1/-1", "/other/1/1",
                "/content/" + (GeneratedContent.MAX_SIZE + 1) + "/1"}) {
            assertThat(GeneratedContent.parse(path)).as(path).isNull();
        }
    }

    @Test
    void bodyIsAFunctionOfThePath() {
        assertThat(new GeneratedContent.Resource(4096, 7).seed())
                .isEqualTo(GeneratedContent.seed(4096, 7))
                .isNotEqualTo(GeneratedContent.seed(4096, 8))
                .isNotEqualTo(GeneratedContent.seed(1000, 7));
    }
}
