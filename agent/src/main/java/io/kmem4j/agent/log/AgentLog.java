package io.kmem4j.agent.log;

import java.io.PrintStream;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * The agent's own logging, {@code [kmem4j] LEVEL message} on {@code System.err}: a private Logback
 * {@link LoggerContext} built in code. It never reads {@code logback.xml}, never goes through SLF4J's
 * provider discovery, and never touches the application's logging (case C15).
 *
 * <p>Logback is started only for a line that needs it: a warning, an error or debug output. The
 * agent's one start line at INFO is formatted with SLF4J's {@link MessageFormatter} and written as
 * Logback would write it: setting up Logback costs some 150 ms of CPU and a few MB, which a JVM that
 * runs well should not pay at every start.
 *
 * <p>Threads: any.
 */
public final class AgentLog {
    private static final String PREFIX = "[kmem4j] ";
    private static volatile LoggerContext context;
    /** The level as SLF4J's event level's int (TRACE 0 ... ERROR 40), or {@link #OFF}; read without loading Logback. */
    private static volatile int level = org.slf4j.event.Level.INFO.toInt();
    private static volatile String levelName = "info";
    private static final int OFF = Integer.MAX_VALUE;

    private AgentLog() {
    }

    /** Sets the level ({@code trace} ... {@code error}, {@code off}); Logback itself starts on first need. */
    public static synchronized void configure(final String name) {
        final String n = name == null ? "info" : name.toLowerCase(java.util.Locale.ROOT);
        switch (n) {
            case "trace": level = org.slf4j.event.Level.TRACE.toInt(); break;
            case "debug": level = org.slf4j.event.Level.DEBUG.toInt(); break;
            case "warn": level = org.slf4j.event.Level.WARN.toInt(); break;
            case "error": level = org.slf4j.event.Level.ERROR.toInt(); break;
            case "off": level = OFF; break;
            default: level = org.slf4j.event.Level.INFO.toInt();
        }
        levelName = n;
        final LoggerContext ctx = context;
        if (ctx != null) {
            Logback.level(ctx, levelName);
        }
    }

    /** @return a logger for {@code type}; cheap, Logback is started only when a line needs it. */
    public static Logger get(final Class<?> type) {
        return new Lazy(type.getName());
    }

    private static synchronized LoggerContext logback() {
        LoggerContext ctx = context;
        if (ctx == null) {
            ctx = Logback.start(PREFIX, levelName);
            context = ctx;
        }
        return ctx;
    }

    /** An SLF4J logger that writes INFO lines itself while nothing else was logged, and hands the rest to Logback. */
    private static final class Lazy extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;

        Lazy(final String name) {
            this.name = name;
        }

        private static boolean enabled(final org.slf4j.event.Level l) {
            return l.toInt() >= level;
        }

        @Override
        public boolean isTraceEnabled() {
            return enabled(org.slf4j.event.Level.TRACE);
        }

        @Override
        public boolean isDebugEnabled() {
            return enabled(org.slf4j.event.Level.DEBUG);
        }

        @Override
        public boolean isInfoEnabled() {
            return enabled(org.slf4j.event.Level.INFO);
        }

        @Override
        public boolean isWarnEnabled() {
            return enabled(org.slf4j.event.Level.WARN);
        }

        @Override
        public boolean isErrorEnabled() {
            return enabled(org.slf4j.event.Level.ERROR);
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(final org.slf4j.event.Level l, final Marker marker, final String msg,
                                                   final Object[] args, final Throwable t) {
            if (l == org.slf4j.event.Level.INFO && t == null && context == null) {
                final PrintStream err = System.err;
                err.print(PREFIX + "INFO " + MessageFormatter.basicArrayFormat(msg, args) + System.lineSeparator());
                err.flush();
                return;
            }
            final ch.qos.logback.classic.Logger logger = Logback.logger(logback(), name);
            switch (l) {
                case ERROR:
                    logger.error(marker, msg, withThrowable(args, t));
                    break;
                case WARN:
                    logger.warn(marker, msg, withThrowable(args, t));
                    break;
                case INFO:
                    logger.info(marker, msg, withThrowable(args, t));
                    break;
                case DEBUG:
                    logger.debug(marker, msg, withThrowable(args, t));
                    break;
                default:
                    logger.trace(marker, msg, withThrowable(args, t));
            }
        }

        private static Object[] withThrowable(final Object[] args, final Throwable t) {
            if (t == null) {
                return args;
            }
            final Object[] all = java.util.Arrays.copyOf(args == null ? new Object[0] : args,
                (args == null ? 0 : args.length) + 1);
            all[all.length - 1] = t;
            return all;
        }
    }

    /** Logback's set-up, in a class of its own so that nothing of Logback loads until a line needs it. */
    private static final class Logback {
        private Logback() {
        }

        static LoggerContext start(final String prefix, final String level) {
            final LoggerContext ctx = new LoggerContext();
            ctx.setName("kmem4j");
            ctx.setMDCAdapter(new LogbackMDCAdapter()); // normally set by SLF4J's provider, which we bypass
            final PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(ctx);
            encoder.setPattern(prefix + "%level %msg%n");
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
            return ctx;
        }

        static void level(final LoggerContext ctx, final String level) {
            ctx.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.toLevel(level, Level.INFO));
        }

        static ch.qos.logback.classic.Logger logger(final LoggerContext ctx, final String name) {
            return ctx.getLogger(name);
        }
    }
}
