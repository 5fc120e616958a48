package io.kmem4j.agent.jmx;

import javax.management.AttributeList;
import javax.management.StandardMBean;

/**
 * Registers a kmem4j view as an MXBean whose {@code getAttributes} (one JMX call for many
 * attributes, as jconsole and the Prometheus JMX exporter use) answers every attribute from the
 * same {@link StatsSnapshots} snapshot, so e.g. {@code Allocations - Frees == LiveBuffers} holds
 * within one call even when the snapshot is refreshed meanwhile.
 */
final class OneSnapshotMBean extends StandardMBean {
    private final StatsSnapshots snapshots;

    <T> OneSnapshotMBean(final T view, final Class<T> mxbeanInterface, final StatsSnapshots snapshots) {
        super(view, mxbeanInterface, true);
        this.snapshots = snapshots;
    }

    @Override
    public AttributeList getAttributes(final String[] attributes) {
        return snapshots.pinned(() -> super.getAttributes(attributes));
    }
}
