package io.kmem4j.agent;

import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;
import java.security.CodeSource;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Entry point of {@code kmem4j-agent.jar}: {@code -javaagent:kmem4j-agent.jar[=key=value,...]}
 * ({@link #premain}), a dynamic attach ({@link #agentmain}), or the command line
 * ({@code java -jar kmem4j-agent.jar ...}, {@link #main}).
 *
 * <p>This is the only kmem4j class the application's class loader can see (case C15). Every other
 * class of the agent, and the relocated ByteBuddy, Agrona, SLF4J and Logback, sits under
 * {@code kmem4j-inf/} in the jar and is loaded by a private class loader (an instance of this class,
 * a {@link URLClassLoader}) whose parent is the platform class loader, so the application's own
 * copies of those libraries never meet ours and the access the agent opens in {@code java.base} is
 * granted to that loader's module only.
 *
 * <p>This class does almost nothing and never throws: any failure while installing is reported on
 * stderr and the application runs on the JDK's own allocator.
 */
public final class Kmem4jAgent extends URLClassLoader implements java.util.function.Supplier<Object[]> {
    private static final String HIDDEN_ROOT = "kmem4j-inf/";
    private static final String ENTRY = "io.kmem4j.agent.AgentEntry";
    private static final String CLI = "io.kmem4j.agent.cli.Kmem4jCli";

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
            final Kmem4jAgent loader = hiddenLoader(ClassLoader.getPlatformClassLoader());
            loader.handoff = new Object[] {args, inst, dynamic};
            // the entry's static initializer installs (it takes the handoff through get()): no reflective call,
            // which on JDK 18+ spins method handles, some 10 ms of every start-up on 25
            Class.forName(ENTRY, true, loader);
        } catch (final ExceptionInInitializerError e) {
            System.err.println("[kmem4j] ERROR kmem4j could not start, the application runs on the JDK's allocator: "
                + e.getCause());
        } catch (final Throwable t) {
            System.err.println("[kmem4j] ERROR kmem4j could not start, the application runs on the JDK's allocator: " + t);
        }
    }

    /** What {@code install} hands to the entry class: the arguments, the instrumentation, dynamic or not. */
    private volatile Object[] handoff;

    /**
     * @return the handoff, once ({@code io.kmem4j.agent.AgentEntry} takes it); then {@code null}
     */
    @Override
    public Object[] get() {
        final Object[] h = handoff;
        handoff = null;
        return h;
    }

    private static Kmem4jAgent hiddenLoader(final ClassLoader parent) throws java.io.IOException {
        final URL jar = Kmem4jAgent.class.getProtectionDomain().getCodeSource().getLocation();
        return new Kmem4jAgent(jar, parent);
    }

    static {
        ClassLoader.registerAsParallelCapable();
    }

    private final JarFile jar;
    private final CodeSource source;

    /**
     * The agent's private loader, an instance of this class so that the application's loader still sees
     * one kmem4j class: a {@link URLClassLoader} over {@code kmem4j-inf/} in the agent jar (resources as
     * any), except that classes are read from one {@link JarFile} opened here, not through a {@code jar:}
     * URL connection per class, which at start-up, where all of it runs in the interpreter, cost about a
     * third of the agent's class loading (hello-world: 0.035 s of CPU).
     */
    private Kmem4jAgent(final URL jar, final ClassLoader parent) throws java.io.IOException {
        super("kmem4j", new URL[] {new URL("jar:" + jar + "!/" + HIDDEN_ROOT)}, parent);
        this.jar = new JarFile(file(jar), false);
        this.source = new CodeSource(getURLs()[0], (java.security.cert.Certificate[]) null);
    }

    private static java.io.File file(final URL jar) {
        try {
            return new java.io.File(jar.toURI());
        } catch (final java.net.URISyntaxException | IllegalArgumentException notAUri) {
            return new java.io.File(jar.getPath()); // a location with characters a URI does not allow
        }
    }

    /**
     * The agent's own resources (its version, logging set-up) from the {@link JarFile} opened here, as
     * its classes: a {@code jar:} URL connection costs a few milliseconds of class loading at start-up.
     * Anything else as any {@link URLClassLoader}.
     */
    @Override
    public InputStream getResourceAsStream(final String name) {
        final JarEntry entry = jar.getJarEntry(HIDDEN_ROOT + name);
        if (entry != null && !entry.isDirectory()) {
            try {
                return jar.getInputStream(entry);
            } catch (final java.io.IOException unreadable) {
                // as a URLClassLoader does: try the usual way
            }
        }
        return super.getResourceAsStream(name);
    }

    @Override
    protected Class<?> findClass(final String name) throws ClassNotFoundException {
        final JarEntry entry = jar.getJarEntry(HIDDEN_ROOT + name.replace('.', '/') + ".class");
        if (entry == null) {
            throw new ClassNotFoundException(name);
        }
        final byte[] bytes;
        try (InputStream in = jar.getInputStream(entry)) {
            bytes = in.readAllBytes();
        } catch (final java.io.IOException e) {
            throw new ClassNotFoundException(name, e);
        }
        final int dot = name.lastIndexOf('.');
        if (dot > 0 && getDefinedPackage(name.substring(0, dot)) == null) {
            try {
                definePackage(name.substring(0, dot), null, null, null, null, null, null, null);
            } catch (final IllegalArgumentException raced) {
                // another thread defined it meanwhile
            }
        }
        return defineClass(name, bytes, 0, bytes.length, source);
    }
}
