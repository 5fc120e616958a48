package io.kmem4j.samples.echo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class EchoSampleTest {

    private static final Pattern KEY_VALUE = Pattern.compile("(\\S+)=(\\S+)");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return new CommandLine(new EchoSample())
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
    }

    /** The key=value pairs of the stdout line that starts with {@code prefix}. */
    private Map<String, String> line(String prefix) {
        String line = out.toString().lines()
                .filter(l -> l.startsWith(prefix))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line " + prefix + " in:\n" + out));
        Matcher m = KEY_VALUE.matcher(line);
        return m.results().collect(Collectors.toMap(r -> r.group(1), r -> r.group(2)));
    }

    @Test
    void echoesAndVerifiesAllMessages() {
        int exitCode = execute("--messages", "500", "--connections", "2");

        assertThat(exitCode).as("exit code; stderr: %s", err).isZero();
        Map<String, String> result = line("echo: messages=");
        assertThat(result)
                .containsEntry("messages", "500")
                .containsEntry("connections", "2")
                .containsEntry("verified", "true")
                .containsEntry("mismatches", "0");
        assertThat(Long.parseLong(result.get("bytes"))).isBetween(500L * 64, 500L * 65536);
        assertThat(line("echo: throughput ")).containsKeys("messages/s", "MiB/s", "elapsed_ms");
        assertThat(out.toString()).doesNotContain("holding");
    }

    @Test
    void handlesEmptyPayloadsAndMoreConnectionsThanMessages() {
        assertThat(execute("--messages", "50", "--connections", "3", "--min-size", "0",
                "--max-size", "3")).isZero();
        assertThat(line("echo: messages=")).containsEntry("messages", "50")
                .containsEntry("verified", "true");

        out.getBuffer().setLength(0);
        assertThat(execute("--messages", "2", "--connections", "4")).isZero();
        assertThat(line("echo: messages=")).containsEntry("messages", "2")
                .containsEntry("verified", "true");
    }

    @Test
    void sameSeedSendsTheSameBytes() {
        execute("--messages", "40", "--connections", "2", "--seed", "7");
        String bytes = line("echo: messages=").get("bytes");
        out.getBuffer().setLength(0);
        execute("--messages", "40", "--connections", "2", "--seed", "7");
        assertThat(line("echo: messages=")).containsEntry("bytes", bytes);
    }

    @Test
    void rejectsInvalidSizes() {
        assertThat(execute("--min-size", "100", "--max-size", "99"))
                .isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(err.toString()).contains("--min-size");
    }
}
