package io.kmem4j.samples;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine;

/** Runs a sample command in this JVM and gives access to its output, for the samples' unit tests. */
public final class SampleRun {

    private static final Pattern KEY_VALUE = Pattern.compile("(\\S+)=(\\S+)");

    private final int exitCode;
    private final String out;
    private final String err;

    private SampleRun(int exitCode, String out, String err) {
        this.exitCode = exitCode;
        this.out = out;
        this.err = err;
    }

    /** Executes {@code command} (a picocli command object) with {@code args}. */
    public static SampleRun execute(Object command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = new CommandLine(command)
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new SampleRun(exitCode, out.toString(), err.toString());
    }

    public int exitCode() {
        return exitCode;
    }

    public String out() {
        return out;
    }

    public String err() {
        return err;
    }

    /** The first stdout line starting with {@code prefix}; fails if there is none. */
    public String line(String prefix) {
        return out.lines()
                .filter(l -> l.startsWith(prefix))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line " + prefix + " in:\n" + out
                        + "\nstderr:\n" + err));
    }

    /** The key=value pairs of the first stdout line starting with {@code prefix}. */
    public Map<String, String> values(String prefix) {
        Matcher m = KEY_VALUE.matcher(line(prefix));
        return m.results().collect(Collectors.toMap(r -> r.group(1), r -> r.group(2)));
    }

    @Override
    public String toString() {
        return "exit code " + exitCode + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
}
