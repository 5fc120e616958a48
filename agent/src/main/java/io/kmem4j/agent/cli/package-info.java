/**
 * The command line of {@code java -jar kmem4j-agent.jar}: {@code attach <pid>} (dynamic attach) and
 * {@code slabtop <pid>} (a live view of another JVM's beans), with picocli.
 */
package io.kmem4j.agent.cli;
