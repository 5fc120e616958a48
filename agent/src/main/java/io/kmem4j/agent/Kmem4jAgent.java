package io.kmem4j.agent;

import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;

/**
 * Entry point of {@code kmem4j-agent.jar}: {@code -javaagent:kmem4j-agent.jar[=key=value,...]}
 * ({@link #premain}), a dynamic attach ({@link #agentmain}), or the command line
 * ({@code java -jar kmem4j-agent.jar ...}, {@link #main}).
 *
 * <p>This is the only kmem4j class the application's class loader can see (case C15). Every other
 * class of the agent, and the relocated ByteBuddy, Agrona, SLF4J and Logback, sits under
 * {@code kmem4j-inf/} in the jar and is loaded by a private {@link URLClassLoader} whose parent is
 * the platform class loader, so the application's own copies of those libraries never meet ours and
 * the access the agent opens in {@code java.base} is granted to that loader's module only.
 *
 * <p>This class does almost nothing and never throws: any failure while installing is reported on
 * stderr and the application runs on the JDK's own allocator.
 */
public final class Kmem4jAgent {
    private static final String HIDDEN_ROOT = "kmem4j-inf/";
    private static final String INSTALLER = "io.kmem4j.agent.AgentInstaller";
    private static final String CLI = "io.kmem4j.agent.cli.Kmem4jCli";

    private Kmem4jAgent() {
    }

    /**
     * Called by the JVM before {@code main} for {@code -javaagent}.
     *
     * @param args the text after {@code =}, e.g. {@code summary=true,maxSizeClassBytes=65536}; may be null
     * @param inst the JVM's instrumentation
     */
    public static void premain(final String args, final Instrumentation inst) {
        install(args, inst, false);
    }

    /**
     * Called by the JVM for a dynamic attach (Attach API {@code loadAgent}).
     *
     * @param args as for {@link #premain}
     * @param inst the JVM's instrumentation
     */
    public static void agentmain(final String args, final Instrumentation inst) {
        install(args, inst, true);
    }

    /**
     * The command line: {@code java -jar kmem4j-agent.jar attach <pid> [options]} and friends
     * ({@code --help} lists them).
     *
     * @param args command-line arguments
     */
    public static void main(final String[] args) {
        int status;
        try {
            final Class<?> cli = Class.forName(CLI, true, hiddenLoader(ClassLoader.getSystemClassLoader()));
            status = (int) cli.getMethod("run", String[].class).invoke(null, (Object) args);
        } catch (final ReflectiveOperationException | java.io.IOException | RuntimeException | LinkageError e) {
            System.err.println("kmem4j: cannot start the command line: " + e);
            status = 70;
        }
        System.exit(status);
    }

    private static void install(final String args, final Instrumentation inst, final boolean dynamic) {
        try {
            final Class<?> installer = Class.forName(INSTALLER, true,
                hiddenLoader(ClassLoader.getPlatformClassLoader()));
            installer.getMethod("installSafely", String.class, Instrumentation.class, boolean.class)
                .invoke(null, args, inst, dynamic);
        } catch (final Throwable t) {
            System.err.println("[kmem4j] ERROR kmem4j could not start, the application runs on the JDK's allocator: " + t);
        }
    }

    private static ClassLoader hiddenLoader(final ClassLoader parent) throws java.net.MalformedURLException {
        final URL jar = Kmem4jAgent.class.getProtectionDomain().getCodeSource().getLocation();
        return new URLClassLoader("kmem4j", new URL[] {new URL("jar:" + jar + "!/" + HIDDEN_ROOT)}, parent);
    }
}
