package io.kmem4j.agent.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code java -jar kmem4j-agent.jar <command>}: the agent's command line.
 */
@Command(name = "java -jar kmem4j-agent.jar", mixinStandardHelpOptions = true,
    versionProvider = Kmem4jCli.Version.class,
    description = "kmem4j: a slab allocator for direct ByteBuffers, as a Java agent.",
    footer = {"", "As an agent, from the start of a program:",
        "  java -javaagent:kmem4j-agent.jar[=key=value,...] -jar app.jar",
        "  (summary=true prints the allocator's figures at exit; every option and",
        "  what it allows: README, Options)"},
    subcommands = {AttachCommand.class, SlabtopCommand.class})
public final class Kmem4jCli implements Runnable {
    /** {@code --version}: the agent's version from its build. */
    static final class Version implements picocli.CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"kmem4j " + io.kmem4j.agent.config.AgentVersion.get()};
        }
    }

    @Override
    public void run() {
        CommandLine.usage(this, System.out);
    }

    /**
     * Runs the command line.
     *
     * @param args arguments
     * @return the exit status (0 success, 1 failure, 2 usage error)
     */
    public static int run(final String[] args) {
        final CommandLine cli = new CommandLine(new Kmem4jCli());
        for (final CommandLine sub : cli.getSubcommands().values()) {
            sub.getCommandSpec().versionProvider(new Version()); // attach --version printed nothing (trial finding)
        }
        return cli.execute(args);
    }
}
