/**
 * The agent's own log (relocated SLF4J and Logback, stderr, prefix {@code [kmem4j]}; never the
 * application's logging) and {@link io.kmem4j.agent.log.Failures}: failures on an application's
 * path, counted and logged once.
 */
package io.kmem4j.agent.log;
