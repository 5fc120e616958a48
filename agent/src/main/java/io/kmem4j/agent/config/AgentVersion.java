package io.kmem4j.agent.config;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The agent's version, from a resource filtered at build time. Threads: any. */
public final class AgentVersion {
    private static final String UNKNOWN = "(unknown version)";

    private AgentVersion() {
    }

    /** @return the version, e.g. {@code 0.1.0-SNAPSHOT}, or {@code "(unknown version)"} when the resource is missing. */
    public static String get() {
        String v = version;
        if (v == null) {
            v = read();
            version = v;
        }
        return v;
    }

    private static volatile String version;

    private static String read() {
        try (InputStream in = AgentVersion.class.getResourceAsStream("kmem4j-version.properties")) {
            final Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", UNKNOWN);
        } catch (final IOException e) {
            return UNKNOWN;
        }
    }
}
