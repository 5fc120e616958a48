package io.kmem4j.samples;

import io.kmem4j.samples.dropper.DropperSample;
import io.kmem4j.samples.echo.EchoSample;
import io.kmem4j.samples.hashchain.HashChainSample;
import io.kmem4j.samples.jetty.JettySample;
import io.kmem4j.samples.kvstore.KvStoreSample;
import io.kmem4j.samples.nettyhttp.NettyHttpSample;
import io.kmem4j.samples.pipeline.PipelineSample;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Command-line entry point of the sample applications: a picocli command whose subcommands are the
 * individual samples.
 *
 * <p>Each sample is one {@code @Command} class in its own package; to add a sample, write its class
 * and list it in {@code subcommands} below. The samples are ordinary programs that use direct
 * {@link java.nio.ByteBuffer}s the way real applications do.
 *
 * <p>Threads: runs the chosen sample on the calling ({@code main}) thread and exits with the
 * sample's exit code (0 on success, 1 on verification failure or error, 2 on a usage error).
 */
@Command(
        name = "kmem4j-samples",
        mixinStandardHelpOptions = true,
        description = "Sample programs that use direct ByteBuffers.",
        subcommands = {
            HelpCommand.class,
            EchoSample.class,
            PipelineSample.class,
            HashChainSample.class,
            KvStoreSample.class,
            NettyHttpSample.class,
            JettySample.class,
            DropperSample.class
        })
public final class Samples implements Runnable {

    @Spec private CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, every subcommand answering {@code --version} as the top one (it printed nothing: trial finding). */
    static CommandLine commandLine() {
        final CommandLine cli = new CommandLine(new Samples());
        final String[] version = {"kmem4j-samples " + version()};
        cli.getCommandSpec().version(version);
        for (final CommandLine sub : cli.getSubcommands().values()) {
            sub.getCommandSpec().version(version);
        }
        return cli;
    }

    /** @return the version in the jar's manifest, or "(development build)" when run from classes */
    static String version() {
        final String v = Samples.class.getPackage().getImplementationVersion();
        return v != null ? v : "(development build)";
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand");
    }
}
