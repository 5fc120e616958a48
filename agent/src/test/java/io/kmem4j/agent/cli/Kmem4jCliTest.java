package io.kmem4j.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import io.kmem4j.agent.config.AgentVersion;
import org.junit.jupiter.api.Test;

/** What {@code java -jar kmem4j-agent.jar} prints for help and versions (trial findings: no word of -javaagent, an empty attach --version). */
class Kmem4jCliTest {
    private static String run(final String... args) {
        final PrintStream saved = System.out;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertThat(Kmem4jCli.run(args)).as("exit status of %s", String.join(" ", args)).isZero();
        } finally {
            System.setOut(saved);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpSaysHowToStartTheAgent() {
        assertThat(run("--help")).contains("-javaagent:kmem4j-agent.jar", "attach", "slabtop");
    }

    @Test
    void everyCommandPrintsTheVersion() {
        final String expected = "kmem4j " + AgentVersion.get();
        assertThat(run("--version").trim()).isEqualTo(expected);
        assertThat(run("attach", "--version").trim()).isEqualTo(expected);
        assertThat(run("slabtop", "-V").trim()).isEqualTo(expected);
    }
}
