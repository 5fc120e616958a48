package io.kmem4j.it.apps;

import java.lang.instrument.Instrumentation;

/**
 * A java agent that runs before kmem4j's ({@code -javaagent:early.jar -javaagent:kmem4j-agent.jar}):
 * it loads and initializes {@link UserPool} and {@link EarlyCaller}, so that kmem4j finds them
 * already loaded and must retransform them. Records their names in the system property
 * {@value #PROPERTY}.
 */
public final class EarlyAgent {
    public static final String PROPERTY = "it.early.loaded";

    private EarlyAgent() {
    }

    public static void premain(String args, Instrumentation inst) throws ClassNotFoundException {
        StringBuilder loaded = new StringBuilder();
        for (String name : new String[] {"io.kmem4j.it.apps.UserPool", "io.kmem4j.it.apps.EarlyCaller"}) {
            Class<?> c = Class.forName(name, true, ClassLoader.getSystemClassLoader());
            loaded.append(loaded.length() == 0 ? "" : ",").append(c.getSimpleName());
        }
        System.setProperty(PROPERTY, loaded.toString());
    }
}
