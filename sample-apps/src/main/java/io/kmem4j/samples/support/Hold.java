package io.kmem4j.samples.support;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * The {@code --hold} behaviour shared by the samples: announce it on stdout, then block until stdin
 * reaches end of file or a line is read, so that the process can be inspected (e.g. with jconsole)
 * after it has done its work.
 *
 * <p>Call from the thread that owns {@code out}; blocks that thread.
 */
public final class Hold {

    private Hold() {}

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
