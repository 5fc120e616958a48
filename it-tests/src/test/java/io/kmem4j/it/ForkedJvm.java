package io.kmem4j.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A JVM started as a child process from a given {@link Jdk}.
 *
 * <p>stdout and stderr are read line by line on daemon threads, kept in memory and echoed to this
 * JVM's stdout as {@code [<name>|out] ...} / {@code [<name>|err] ...}. Every wait is bounded; a
 * failed wait throws an {@link AssertionError} that includes the command line, the process state
 * and the tail of both streams. {@link #close()} destroys the process (forcibly) if it is still
 * running, so use it in try-with-resources.
 *
 * <p>The child gets exactly the JVM arguments it is given: {@code JAVA_TOOL_OPTIONS},
 * {@code _JAVA_OPTIONS} and {@code JDK_JAVA_OPTIONS} are removed from its environment. Its working
 * directory is {@code target/forked-jvms/<name>-<n>} (where crash logs would land).
 */
public final class ForkedJvm implements AutoCloseable {

    /** The two output streams of the child. */
    public enum Channel {
        STDOUT("out"), STDERR("err");

        final String tag;

        Channel(String tag) {
            this.tag = tag;
        }
    }

    private static final int TAIL_LINES = 60;
    private static final Duration READER_JOIN = Duration.ofSeconds(5);
    private static final Duration DESTROY_WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        // Last resort if the test JVM is stopped while children still run.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(p -> {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }), "kmem4j-it-forked-jvm-reaper"));
    }

    private final String name;
    private final List<String> command;
    private final Process process;
    private final Capture stdout;
    private final Capture stderr;
    private final OutputStream stdin;
    private boolean stdinClosed;

    private ForkedJvm(String name, List<String> command, Path workDir) {
        this.name = name;
        this.command = List.copyOf(command);
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.remove("_JAVA_OPTIONS");
        env.remove("JDK_JAVA_OPTIONS");
        System.out.println(TestJdks.LOG_PREFIX + "starting " + name + ": " + String.join(" ", command));
        try {
            this.process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
        RUNNING.add(process);
        this.stdin = process.getOutputStream();
        this.stdout = new Capture(name, Channel.STDOUT, process.getInputStream());
        this.stderr = new Capture(name, Channel.STDERR, process.getErrorStream());
    }

    public static Builder builder(Jdk jdk, String name) {
        return new Builder(jdk, name);
    }

    /** Configures and starts a {@link ForkedJvm}. */
    public static final class Builder {
        private final Jdk jdk;
        private final String name;
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> programArgs = new ArrayList<>();
        private final List<String> launchTarget = new ArrayList<>();

        private Builder(Jdk jdk, String name) {
            this.jdk = jdk;
            this.name = name;
        }

        public Builder jvmArgs(String... args) {
            jvmArgs.addAll(Arrays.asList(args));
            return this;
        }

        public Builder jvmArgs(List<String> args) {
            jvmArgs.addAll(args);
            return this;
        }

        /** Runs {@code -jar <jar>}. */
        public Builder jar(Path jar) {
            launchTarget.clear();
            launchTarget.add("-jar");
            launchTarget.add(jar.toString());
            return this;
        }

        /** Runs {@code -cp <classpath> <mainClass>}. */
        public Builder mainClass(String classpath, String mainClass) {
            launchTarget.clear();
            launchTarget.add("-cp");
            launchTarget.add(classpath);
            launchTarget.add(mainClass);
            return this;
        }

        public Builder programArgs(String... args) {
            programArgs.addAll(Arrays.asList(args));
            return this;
        }

        public Builder programArgs(List<String> args) {
            programArgs.addAll(args);
            return this;
        }

        public ForkedJvm start() {
            if (launchTarget.isEmpty()) {
                throw new IllegalStateException("call jar(..) or mainClass(..) before start()");
            }
            List<String> cmd = new ArrayList<>();
            cmd.add(jdk.javaExecutable().toString());
            cmd.addAll(jvmArgs);
            cmd.addAll(launchTarget);
            cmd.addAll(programArgs);
            String unique = name + "-" + SEQUENCE.incrementAndGet();
            Path workDir = Path.of("target", "forked-jvms", unique.replaceAll("[^A-Za-z0-9._-]", "_"))
                    .toAbsolutePath();
            try {
                Files.createDirectories(workDir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new ForkedJvm(name, cmd, workDir);
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public OptionalInt exitCode() {
        return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    /** A snapshot of all lines read so far from the channel. */
    public List<String> lines(Channel channel) {
        return capture(channel).snapshot();
    }

    public List<String> stdoutLines() {
        return lines(Channel.STDOUT);
    }

    public List<String> stderrLines() {
        return lines(Channel.STDERR);
    }

    /**
     * Waits until the channel has a line matching {@code matcher} (lines already read count) and
     * returns the first such line. Fails fast if the channel ends without one.
     */
    public String awaitLine(Channel channel, String description, Predicate<String> matcher, Duration timeout) {
        Capture capture = capture(channel);
        long deadline = System.nanoTime() + timeout.toNanos();
        String failure;
        synchronized (capture) {
            int scanned = 0;
            while (true) {
                for (; scanned < capture.lines.size(); scanned++) {
                    String line = capture.lines.get(scanned);
                    if (matcher.test(line)) {
                        return line;
                    }
                }
                if (capture.eof) {
                    failure = "std" + channel.tag + " of " + name + " ended without a line matching "
                            + description;
                    break;
                }
                long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMillis <= 0) {
                    failure = "timed out after " + timeout.toMillis() + " ms waiting for a line matching "
                            + description + " on std" + channel.tag + " of " + name;
                    break;
                }
                try {
                    capture.wait(remainingMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + description, e);
                }
            }
        }
        throw new AssertionError(failure + "\n" + describe());
    }

    /** {@link #awaitLine} on stdout for a line starting with {@code prefix}. */
    public String awaitStdoutLine(String prefix, Duration timeout) {
        return awaitLine(Channel.STDOUT, "'" + prefix + "...'", l -> l.startsWith(prefix), timeout);
    }

    /** Writes (and flushes) text to the child's stdin. */
    public void writeStdin(String text) {
        try {
            stdin.write(text.getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to stdin of " + name + "\n" + describe(), e);
        }
    }

    /** Closes the child's stdin (EOF on its side). Idempotent. */
    public synchronized void closeStdin() {
        if (!stdinClosed) {
            stdinClosed = true;
            try {
                stdin.close();
            } catch (IOException ignored) {
                // the child may already be gone (broken pipe): nothing left to close
            }
        }
    }

    /**
     * Waits for the child to exit and returns its exit code; fails (leaving the process to
     * {@link #close()}) if it does not exit in time. Once it exited, all its output has been read.
     */
    public int waitForExit(Duration timeout) {
        boolean exited;
        try {
            exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + name + " to exit", e);
        }
        if (!exited) {
            throw new AssertionError(name + " did not exit within " + timeout.toMillis() + " ms\n" + describe());
        }
        stdout.join(READER_JOIN);
        stderr.join(READER_JOIN);
        RUNNING.remove(process);
        return process.exitValue();
    }

    /** Command line, state and the tail of both streams, for failure messages. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("--- ").append(name).append(" (pid ").append(process.pid()).append(", ")
                .append(process.isAlive() ? "running" : "exited with " + process.exitValue()).append(")\n");
        sb.append("command: ").append(String.join(" ", command)).append('\n');
        for (Capture c : List.of(stdout, stderr)) {
            List<String> lines = c.snapshot();
            int from = Math.max(0, lines.size() - TAIL_LINES);
            sb.append("--- std").append(c.channel.tag).append(" (").append(lines.size()).append(" lines")
                    .append(from > 0 ? ", last " + TAIL_LINES : "").append(")\n");
            for (String line : lines.subList(from, lines.size())) {
                sb.append("  ").append(line).append('\n');
            }
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }

    /** Destroys the child (and its descendants) if it still runs. Never throws. */
    @Override
    public void close() {
        closeStdin();
        if (process.isAlive()) {
            System.out.println(TestJdks.LOG_PREFIX + "destroying " + this);
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                if (!process.waitFor(DESTROY_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.out.println(TestJdks.LOG_PREFIX + this + " still alive after destroyForcibly");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!process.isAlive()) {
            RUNNING.remove(process);
        }
        stdout.join(READER_JOIN);
        stderr.join(READER_JOIN);
    }

    private Capture capture(Channel channel) {
        return channel == Channel.STDOUT ? stdout : stderr;
    }

    /** Lines of one stream, filled by a daemon reader thread; the monitor is notified on each line and at EOF. */
    private static final class Capture implements Runnable {
        private final String owner;
        private final Channel channel;
        private final InputStream in;
        private final List<String> lines = new ArrayList<>();
        private final Thread thread;
        private boolean eof;

        Capture(String owner, Channel channel, InputStream in) {
            this.owner = owner;
            this.channel = channel;
            this.in = in;
            this.thread = new Thread(this, "kmem4j-it-" + owner + "-" + channel.tag);
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void run() {
            String prefix = "[" + owner + "|" + channel.tag + "] ";
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    System.out.println(prefix + line);
                    synchronized (this) {
                        lines.add(line);
                        notifyAll();
                    }
                }
            } catch (IOException e) {
                System.out.println(prefix + "<reader stopped: " + e + ">");
            } finally {
                synchronized (this) {
                    eof = true;
                    notifyAll();
                }
            }
        }

        synchronized List<String> snapshot() {
            return List.copyOf(lines);
        }

        void join(Duration timeout) {
            try {
                thread.join(timeout.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
