package io.kmem4j.agent.cli;

import java.io.IOException;
import javax.management.AttributeNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/** Reads whether a target's kmem4j is off, for {@code attach} and {@code slabtop}. */
final class Off {
    private Off() {
    }

    /**
     * @param server    the target's MBean server
     * @param allocator its {@code kmem4j:type=Allocator} bean
     * @return the bean's {@code DisabledReason} when {@code Enabled} is false; {@code null} when it
     *         serves (or is an agent from before these attributes)
     */
    static String reason(final MBeanServerConnection server, final ObjectName allocator)
        throws IOException, JMException {
        final Object enabled;
        try {
            enabled = server.getAttribute(allocator, "Enabled");
        } catch (final AttributeNotFoundException older) {
            return null;
        }
        if (!Boolean.FALSE.equals(enabled)) {
            return null;
        }
        final Object reason = server.getAttribute(allocator, "DisabledReason");
        return reason instanceof String s && !s.isEmpty() ? s : "(no reason given)";
    }

    /**
     * @param target the target's system properties (Attach API)
     * @param pid    its pid
     * @return the first part of the line saying it was started with {@code enabled=false} (a load that
     *         registers no bean), or {@code null} when it was not
     */
    static String startedDisabled(final java.util.Properties target, final long pid) {
        final String state = target.getProperty(io.kmem4j.agent.AgentInstaller.STATE_PROPERTY);
        return state != null && state.startsWith(io.kmem4j.agent.AgentInstaller.DISABLED_STATE)
            ? "kmem4j: pid " + pid + " was started with kmem4j and enabled=false, so it runs on the JDK's allocator"
            : null;
    }
}
