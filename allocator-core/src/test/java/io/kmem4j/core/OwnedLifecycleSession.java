package io.kmem4j.core;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * With {@code -Dkmem4j.test.ownedLifecycle=true} (surefire execution {@code owned-lifecycle}), switches
 * the owned lifecycle on before any test runs, so that every tracked buffer of the run gets a JDK
 * cleaner outside the JDK's list. No agent rewrites {@code clean()} in a unit-test JVM: on JDK 17-25
 * the JDK's own {@code clean()} runs such a cleaner correctly (under its monitor); on 26+, where it
 * cannot, the switch is refused and the run says so.
 */
public final class OwnedLifecycleSession implements LauncherSessionListener {
    @Override
    public void launcherSessionOpened(final LauncherSession session) {
        if (!Boolean.getBoolean("kmem4j.test.ownedLifecycle")) {
            return;
        }
        if (!JdkCleaners.REFERENCE_HANDLER_CLEANS) {
            System.out.println("[kmem4j-test] owned lifecycle not switched on: JDK " + Runtime.version()
                + " needs the agent's rewrite of clean()");
            return;
        }
        OwnedLifecycle.enable();
        System.out.println("[kmem4j-test] owned lifecycle on: tracked buffers' cleaners are outside the JDK's list");
    }
}
