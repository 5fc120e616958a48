package io.kmem4j.agent.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;

/**
 * Attaching to a process id, checked first. On Linux the JDK's Attach API starts by sending the
 * target {@code SIGQUIT} (JDK 17 does so unconditionally), whose default action terminates a process
 * that does not handle it: {@code slabtop} or {@code attach} given the pid of a Python program or a
 * web server killed it, and waited 10 s for an answer first (trial finding). A HotSpot JVM handles
 * {@code SIGQUIT} (it prints thread dumps with it), so a target that does not is refused before
 * anything is sent, and so is one that has exited (a zombie). Handling the signal is all this checks:
 * a program of another language that handles {@code SIGQUIT} in its own way (a Go program dumps its
 * goroutines and exits) is not told from a JVM. Where {@code /proc/<pid>/status} is not there (other
 * systems, no such process), the Attach API decides as before. A process's status is readable by
 * every user, its memory map only by its owner: another user's process is called "not a JVM, or a
 * JVM started with -Xrs".
 *
 * <p>Threads: the command's thread.
 */
final class AttachTarget {
    /** {@code SIGQUIT} in the signal masks of {@code /proc/<pid>/status} (signal n is bit n - 1). */
    private static final long SIGQUIT_BIT = 1L << (3 - 1);

    private AttachTarget() {
    }

    /**
     * @return the attached JVM
     * @throws Refused when {@code pid} is a process that does not handle {@code SIGQUIT}, or has exited (nothing was
     *         sent to it); its message says why, for the caller to print
     * @throws AttachNotSupportedException as {@link VirtualMachine#attach(String)}
     * @throws IOException as {@link VirtualMachine#attach(String)}
     */
    static VirtualMachine attach(final long pid) throws Refused, AttachNotSupportedException, IOException {
        final String refusal = refusal(Path.of("/proc", Long.toString(pid)));
        if (refusal != null) {
            throw new Refused(refusal);
        }
        return VirtualMachine.attach(Long.toString(pid));
    }

    /**
     * @param proc the process's directory under {@code /proc}
     * @return why attaching must not be tried, or {@code null} (it handles {@code SIGQUIT}, or
     *         {@code /proc} does not say)
     */
    static String refusal(final Path proc) {
        final String status;
        final long caught;
        try {
            status = Files.readString(proc.resolve("status"), StandardCharsets.UTF_8);
            caught = caughtSignals(status);
        } catch (final IOException | RuntimeException unknown) {
            return null; // no /proc, no such process: the Attach API says
        }
        // a zombie leader whose other threads still run (it called pthread_exit) is alive: only a lone one has exited
        if ((status.contains("\nState:\tZ") || status.contains("\nState:\tX")) && status.contains("\nThreads:\t1\n")) {
            return "it has exited (its parent has not collected its status yet); nothing was sent";
        }
        if (caught == NO_MASK || (caught & SIGQUIT_BIT) != 0) {
            return null;
        }
        final Boolean libjvm = mapsLibjvm(proc);
        return "it does not handle SIGQUIT, which attaching sends first and which would terminate it: "
            + (libjvm == null ? "it is not a Java virtual machine, or it is a JVM started with -Xrs"
                : libjvm ? "a JVM started with -Xrs, or one still starting" : "it is not a Java virtual machine")
            + "; nothing was sent";
    }

    /** {@link #caughtSignals} of a status text without a {@code SigCgt} line (every mask is a bit set, all-ones included, which has SIGQUIT). */
    static final long NO_MASK = -1;

    /** A target attaching must not touch; the message says why. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(final String message) {
            super(message, null, false, false);
        }
    }

    /** @return the {@code SigCgt} mask of a {@code /proc/<pid>/status} text, or {@link #NO_MASK} when it has none */
    static long caughtSignals(final String status) {
        for (final String line : status.split("\n")) {
            if (line.startsWith("SigCgt:")) {
                return Long.parseUnsignedLong(line.substring("SigCgt:".length()).trim(), 16);
            }
        }
        return NO_MASK;
    }

    /** @return whether the process maps HotSpot's library; {@code null} when its map is not readable here (another user's) */
    private static Boolean mapsLibjvm(final Path proc) {
        try {
            return Files.readString(proc.resolve("maps"), StandardCharsets.UTF_8).contains("/libjvm.so");
        } catch (final IOException | RuntimeException unreadable) {
            return null;
        }
    }
}
