package io.kmem4j.samples.support;

import java.io.IOException;
import java.io.PrintWriter;

import picocli.CommandLine.Option;

/**
 * The {@code --hold} option shared by the samples (a picocli mixin): after the work is done,
 * announce it on stdout, then block until stdin reaches end of file or a line is read, so that the
 * process can be inspected (e.g. with jconsole) after it has done its work.
 *
 * <p>Call {@link #ifRequested} from the thread that owns {@code out}; it blocks that thread.
 */
public final class Hold {
    @Option(names = "--hold",
            description = "After printing the results, wait until stdin reaches end of file or a"
                    + " line is read.")
    private boolean enabled;

    /** @return true when {@code --hold} was given */
    public boolean enabled() {
        return enabled;
    }

    /**
     * With {@code --hold}: prints {@code <sample>: holding (close stdin to exit)} and waits for a
     * line or end of file; without it, returns at once.
     */
    public void ifRequested(String sample, PrintWriter out) throws IOException {
        if (enabled) {
            holdUntilStdinCloses(sample, out);
        }
    }

    /** Prints {@code <sample>: holding (close stdin to exit)} and waits for a line or end of file. */
    public static void holdUntilStdinCloses(String sample, PrintWriter out) throws IOException {
        out.println(sample + ": holding (close stdin to exit)");
        out.flush();
        int b;
        do {
            b = System.in.read();
        } while (b != -1 && b != '\n');
    }
}
