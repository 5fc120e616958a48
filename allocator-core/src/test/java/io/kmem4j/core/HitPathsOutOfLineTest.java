package io.kmem4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The tracked flavour's allocate and release paths are compiled once, on their own, not into every
 * caller ({@link OutOfLine}): a forked JVM compiles a caller of {@link SlabAllocator#allocate} and
 * {@link SlabAllocator#free} with C2 alone ({@code -Xbatch -XX:-TieredCompilation}, so the compile is
 * made before the calls go on) and prints what it inlined into that caller
 * ({@code -XX:CompileCommand=PrintInlining}). The caller must reach the out-of-line calls
 * ({@code OutOfLine::serve}, {@code OutOfLine::release}: the tree printed is the real one) and stop
 * there: neither {@code SlabAllocator::serve} nor {@code SlabAllocator::release} nor anything of the
 * buffer's construction may be in it. Both lifecycles: the release hook in the JDK's cleaner list
 * ({@link Release}) and, where the JDK's {@code clean()} runs it without the agent, the owned one
 * ({@link SlotRelease}). No timing is measured.
 */
class HitPathsOutOfLineTest {
    private static final String CALLER = Probe.class.getName() + "::allocateAndFree";

    /** The forked JVM gets neither debug mode nor the session's lifecycle: once per JDK is enough. */
    @BeforeEach
    void onceInTheDefaultExecution() {
        assumeFalse(Boolean.getBoolean("kmem4j.debug") || Boolean.getBoolean("kmem4j.test.ownedLifecycle"),
            "the forked probe does not take this execution's settings: it ran in the default execution");
    }

    @Test
    void trackedAllocateAndReleaseStayOutOfTheCallersCompiledCode() throws Exception {
        assertOutOfLine(inliningOf("list"));
    }

    @Test
    void sameWithTheOwnedLifecycle() throws Exception {
        final List<String> tree = inliningOf("owned");
        if (!JdkCleaners.REFERENCE_HANDLER_CLEANS) {
            assertThat(tree).as("the probe refuses the owned lifecycle here").contains("owned lifecycle unavailable");
            System.out.println("[kmem4j-test] owned lifecycle needs the agent's rewrite of clean() on JDK "
                + Runtime.version() + ": the JDK's cleaner list variant was checked");
            return;
        }
        assertThat(tree).as("the owned lifecycle's hook ran in the caller").anyMatch(l -> l.contains("SlotRelease::"));
        assertOutOfLine(tree);
    }

    private static void assertOutOfLine(final List<String> tree) {
        assertThat(tree).as("the probe finished").anyMatch(l -> l.startsWith("probe done"));
        assertStopsAtTheHandle(tree, "OutOfLine::serve");
        assertStopsAtTheHandle(tree, "OutOfLine::release");
        assertThat(tree).as("nothing of the allocate and free paths behind the handles is in the caller")
            .noneMatch(l -> l.contains("SlabAllocator::serve ") || l.contains("SlabAllocator::serveFrom")
                || l.contains("SlabAllocator::release ") || l.contains("SlabAllocator::releaseTo")
                || l.contains("BufferFactory::") || l.contains("ThreadRegistry::current"));
    }

    /**
     * {@code entry} was inlined into the caller (so the tree printed is the real one down to it), and
     * the handle call inside it was not: the next {@code invokeBasic} line after it says "receiver not
     * constant". JDK 22+ print a failed inline as "failed to inline: reason", so "inline" alone proves nothing.
     */
    private static void assertStopsAtTheHandle(final List<String> tree, final String entry) {
        final Pattern inlined = Pattern.compile(Pattern.quote(entry) + " \\(\\d+ bytes\\)\\s+inline\\b");
        int at = -1;
        for (int i = 0; i < tree.size(); i++) {
            if (inlined.matcher(tree.get(i)).find() && !tree.get(i).contains("failed")) {
                at = i;
                break;
            }
        }
        assertThat(at).as("C2 inlined %s into the caller; its output:%n%s", entry, String.join("\n", tree))
            .isNotNegative();
        final String handleCall = tree.subList(at + 1, tree.size()).stream()
            .filter(l -> l.contains("MethodHandle::invokeBasic")).findFirst().orElse("(none)");
        assertThat(handleCall).as("the handle call inside %s", entry).contains("receiver not constant");
    }

    /** Runs {@link Probe} in a JVM of its own and returns its output, the inlining tree included. */
    private static List<String> inliningOf(final String lifecycle) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.access=ALL-UNNAMED",
            "-Xbatch", "-XX:-TieredCompilation", "-XX:+UnlockDiagnosticVMOptions",
            "-XX:CompileCommand=quiet", "-XX:CompileCommand=PrintInlining," + CALLER,
            "-cp", System.getProperty("java.class.path"),
            Probe.class.getName(), lifecycle));
        final Path log = Files.createTempFile("kmem4j-inlining-", ".txt");
        try {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("the probe did not end in 120 s; its output so far:\n" + Files.readString(log));
            }
            final String out = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as("the probe's exit status; its output:%n%s", out).isZero();
            return out.lines().toList();
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** The caller compiled in the forked JVM: {@code main(list|owned)}. */
    static final class Probe {
        private Probe() {
        }

        public static void main(final String[] args) {
            if (args[0].equals("owned")) {
                if (!JdkCleaners.REFERENCE_HANDLER_CLEANS) {
                    System.out.println("owned lifecycle unavailable");
                    System.out.println("probe done");
                    return;
                }
                OwnedLifecycle.enable();
            }
            try (SlabAllocator a = new SlabAllocator(SlabAllocatorConfig.defaults())) {
                long bytes = 0;
                for (int i = 0; i < 40_000; i++) {
                    bytes += allocateAndFree(a, 256 + (i & 63));
                }
                System.out.println("probe done, " + bytes + " bytes");
            }
        }

        static int allocateAndFree(final SlabAllocator a, final int capacity) {
            final ByteBuffer b = a.allocate(capacity);
            final int c = b.capacity();
            a.free(b);
            return c;
        }
    }
}
