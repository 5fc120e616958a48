package io.kmem4j.benchmarks.programs;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One whole program the A/B harness runs with and without the agent: a sample of
 * {@code sample-apps} (or the hello-world class), in a default and a long form.
 *
 * @param name        the harness's name for it ({@code echo}, {@code netty-pooled}, ...)
 * @param what        one line for the report
 * @param jvmFlags    JVM flags both runs get (the agent run adds only {@code -javaagent})
 * @param mainClass   a class to run with {@code -cp}, or {@code null} to run {@code -jar samples.jar}
 * @param defaultArgs the program's arguments in its default form (as a new user runs it)
 * @param longArgs    the arguments of its long form (steady state: start-up and growth weigh less)
 */
record Program(String name, String what, List<String> jvmFlags, String mainClass, List<String> defaultArgs,
               List<String> longArgs) {

    /** The forms a program runs in. */
    enum Form {
        DEFAULT, LONG;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    static final String HELLO = "hello";
    static final String POOLED_SERVER = "netty-pooled";

    /** Every program, in report order. */
    static final List<Program> ALL = List.of(
        new Program(HELLO, "prints one line and exits: what the agent adds to start-up", List.of(),
            "io.kmem4j.samples.Hello", List.of(), List.of()),
        new Program("echo", "NIO echo server and client, 4 connections, 64 B..64 KiB messages", List.of(), null,
            List.of("echo"), List.of("echo", "--messages", "200000")),
        new Program("pipeline", "producers hand direct buffers to consumers (cross-thread release, 1 in 4 dropped)",
            List.of(), null, List.of("pipeline"), List.of("pipeline", "--duration", "10")),
        new Program("hashchain", "hash table of off-heap nodes, traversed after random deletes", List.of(), null,
            List.of("hashchain"), List.of("hashchain", "--traversals", "200")),
        new Program("kvstore", "values of 24 B..2 KiB in direct buffers, mixed get/put/delete", List.of(), null,
            List.of("kvstore"), List.of("kvstore", "--ops", "10000000")),
        new Program("netty-http", "Netty 4.2 HTTP server and client, unpooled (every ByteBuf an allocateDirect)",
            List.of("-Dio.netty.allocator.type=unpooled"), null,
            List.of("netty-http"), List.of("netty-http", "--requests", "100000")),
        new Program(POOLED_SERVER, "the same Netty server with its own pooled allocator (a server that pools its buffers)",
            List.of(), null, List.of("netty-http"), List.of("netty-http", "--requests", "100000")),
        new Program("jetty", "Jetty 12 server driven by Jetty's HttpClient (Jetty pools its own buffers)", List.of(),
            null, List.of("jetty"), List.of("jetty", "--requests", "100000")),
        new Program("dropper", "4 KiB messages in direct buffers never freed: GC alone gives them back (1 GiB heap)",
            List.of("-Xms1g", "-Xmx1g"), null, List.of("dropper"), List.of("dropper", "--messages", "8000000")),
        new Program("dropper-limit", "the same with 4 threads x 16 KiB at MaxDirectMemorySize=64m: the limit met every"
            + " few hundred messages", List.of("-XX:MaxDirectMemorySize=64m"), null,
            List.of("dropper", "--threads", "4", "--size", "16384", "--slots", "512", "--messages", "200000"),
            List.of("dropper", "--threads", "4", "--size", "16384", "--slots", "512", "--messages", "1000000")));

    /** @return the program of that name */
    static Optional<Program> named(final String name) {
        return ALL.stream().filter(p -> p.name.equals(name)).findFirst();
    }

    /** @return whether the program has a long form distinct from its default one */
    boolean hasLongForm() {
        return !longArgs.equals(defaultArgs);
    }

    /**
     * The command line after the {@code java} executable.
     *
     * @param form    which form
     * @param agent   {@code -javaagent:...} for the agent run, or {@code null}
     * @param samples the samples jar
     * @param extra   extra JVM flags for both runs
     * @return the arguments
     */
    List<String> command(final Form form, final String agent, final String samples, final List<String> extra) {
        final List<String> c = new ArrayList<>(extra);
        c.addAll(jvmFlags);
        if (agent != null) {
            c.add(agent);
        }
        if (mainClass != null) {
            c.add("-cp");
            c.add(samples);
            c.add(mainClass);
        } else {
            c.add("-jar");
            c.add(samples);
        }
        c.addAll(form == Form.LONG ? longArgs : defaultArgs);
        return c;
    }
}
