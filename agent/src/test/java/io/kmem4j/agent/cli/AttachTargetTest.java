package io.kmem4j.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code slabtop} and {@code attach} given the pid of a process that is not a JVM: refused before the
 * Attach API sends it {@code SIGQUIT}, which killed it (trial finding: a Python program, after a 10 s
 * wait). Linux only for the live process ({@code /proc}); the parsing runs everywhere.
 */
class AttachTargetTest {
    @TempDir
    Path tmp;

    @Test
    void aProcessThatDoesNotHandleSigquitIsRefusedAndLeftAlive() throws Exception {
        final Path sleep = Path.of("/bin/sleep");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")) && Files.isExecutable(sleep),
            "needs /proc and /bin/sleep (Linux)");
        final Process p = new ProcessBuilder(sleep.toString(), "60").start();
        try {
            for (final String command : new String[] {"slabtop", "attach"}) {
                final ByteArrayOutputStream err = new ByteArrayOutputStream();
                final PrintStream saved = System.err;
                System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
                final int status;
                try {
                    status = Kmem4jCli.run(new String[] {command, Long.toString(p.pid())});
                } finally {
                    System.setErr(saved);
                }
                assertThat(status).as("exit status of %s", command).isEqualTo(1);
                assertThat(err.toString(StandardCharsets.UTF_8)).as("what %s says", command)
                    .contains("cannot attach to pid " + p.pid(), "does not handle SIGQUIT", "not a Java virtual machine",
                        "nothing was sent");
                assertThat(p.waitFor(200, TimeUnit.MILLISECONDS)).as("sleep ended after %s", command).isFalse();
                assertThat(p.isAlive()).as("sleep still runs after %s", command).isTrue();
            }
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void thisJvmHandlesSigquitSoItIsNotRefused() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc (Linux)");
        assertThat(AttachTarget.refusal(Path.of("/proc", Long.toString(ProcessHandle.current().pid()))))
            .isNull();
    }

    @Test
    void theCaughtSignalMaskIsRead() throws Exception {
        assertThat(AttachTarget.caughtSignals("Name:\tjava\nSigIgn:\t0000000000000000\nSigCgt:\t2000000181005ccf\n"))
            .isEqualTo(0x2000000181005ccfL);
        assertThat(AttachTarget.caughtSignals("Name:\tx\n")).isEqualTo(-1);
        final Path proc = Files.createDirectories(tmp.resolve("42"));
        Files.writeString(proc.resolve("status"), "SigCgt:\t0000000000000002\n");
        Files.writeString(proc.resolve("maps"), "7f00-7f01 r-xp 0 08:01 1 /usr/lib/jvm/x/lib/server/libjvm.so\n");
        assertThat(AttachTarget.refusal(proc)).contains("-Xrs").contains("nothing was sent");
        Files.writeString(proc.resolve("status"), "SigCgt:\t0000000000000004\n");
        assertThat(AttachTarget.refusal(proc)).as("SIGQUIT handled").isNull();
        assertThat(AttachTarget.refusal(tmp.resolve("no-such-pid"))).as("nothing in /proc: the Attach API says").isNull();
        Files.writeString(proc.resolve("status"), "SigCgt:\t8000000000000000\n");
        assertThat(AttachTarget.refusal(proc)).as("only signal 64 handled (a negative mask)").contains("does not handle SIGQUIT");
        Files.writeString(proc.resolve("status"), "Name:\tjava\nState:\tZ (zombie)\nThreads:\t1\nSigCgt:\t0000000000000000\n");
        assertThat(AttachTarget.refusal(proc)).as("a zombie").contains("has exited").doesNotContain("SIGQUIT");
        Files.writeString(proc.resolve("status"), "Name:\tjava\nState:\tZ (zombie)\nThreads:\t12\nSigCgt:\t2000000181005ccf\n");
        assertThat(AttachTarget.refusal(proc)).as("a zombie leader whose threads still run, handling SIGQUIT").isNull();
        Files.delete(proc.resolve("maps"));
        Files.writeString(proc.resolve("status"), "SigCgt:\t0000000000000000\n");
        assertThat(AttachTarget.refusal(proc)).as("memory map unreadable (another user's)")
            .contains("not a Java virtual machine, or it is a JVM started with -Xrs");
    }
}
