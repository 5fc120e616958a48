package io.kmem4j.agent.log;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.Logger;

/**
 * The agent's own logging: a private Logback {@link LoggerContext} built in code, writing to
 * {@code System.err} with the prefix {@code [kmem4j]}. It never reads {@code logback.xml}, never
 * goes through SLF4J's provider discovery, and never touches the application's logging (case C15).
 */
public final class AgentLog {
    private static volatile LoggerContext context;

    private AgentLog() {
    }

    public static synchronized void configure(final String level) {
        if (context != null) {
            context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.toLevel(level, Level.INFO));
            return;
        }
        final LoggerContext ctx = new LoggerContext();
        ctx.setName("kmem4j");
        ctx.setMDCAdapter(new LogbackMDCAdapter()); // normally set by SLF4J's provider, which we bypass
        final PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(ctx);
        encoder.setPattern("[kmem4j] %level %msg%n");
        encoder.start();
        final ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(ctx);
        appender.setName("stderr");
        appender.setTarget("System.err");
        appender.setEncoder(encoder);
        appender.start();
        final ch.qos.logback.classic.Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.detachAndStopAllAppenders();
        root.addAppender(appender);
        root.setLevel(Level.toLevel(level, Level.INFO));
        ctx.start();
        context = ctx;
    }

    public static Logger get(final Class<?> type) {
        if (context == null) {
            configure("info");
        }
        return context.getLogger(type.getName());
    }
}
