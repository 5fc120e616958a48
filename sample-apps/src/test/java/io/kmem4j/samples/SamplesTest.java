package io.kmem4j.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SamplesTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(String... args) {
        return Samples.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
    }

    @Test
    void helpListsEverySample() {
        assertThat(execute("--help")).isZero();
        assertThat(out.toString()).contains("kmem4j-samples", "echo", "pipeline", "hashchain",
                "kvstore", "netty-http", "jetty");
    }

    @Test
    void runsTheNewSubcommands() {
        assertThat(execute("pipeline", "--items", "10")).isZero();
        assertThat(execute("hashchain", "--nodes", "10")).isZero();
        assertThat(execute("kvstore", "--ops", "10", "--keys", "5")).isZero();
        assertThat(out.toString()).contains("pipeline: items=10 ", "hashchain: nodes=10 ",
                "kvstore: ops=10 ");
    }

    @Test
    void runsTheEchoSubcommand() {
        assertThat(execute("echo", "--messages", "100", "--connections", "2")).isZero();
        assertThat(out.toString()).contains("echo: messages=100 connections=2 ");
    }

    @Test
    void everyCommandPrintsTheVersion() {
        assertThat(execute("--version")).isZero();
        assertThat(execute("echo", "--version")).isZero();
        assertThat(execute("dropper", "-V")).isZero();
        assertThat(out.toString().lines()).hasSize(3).allMatch(l -> l.startsWith("kmem4j-samples ") && l.length() > 15);
    }

    @Test
    void missingSubcommandIsAUsageError() {
        assertThat(execute()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(err.toString()).contains("Missing required subcommand");
    }
}
