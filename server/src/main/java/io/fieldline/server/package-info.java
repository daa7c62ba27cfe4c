/**
 * The composition root: {@code FieldlineServer} validates every configuration block, then starts
 * one tier after the other, each built by its own class ({@code StorageTier}, {@code DeviceTier},
 * {@code ClusterTier}, {@code MqttTier}, {@code HttpTier}) and each registering what undoes it in
 * {@code StopSteps}. Also here: the embedded-default start (Cassandra child JVM, generated secrets,
 * the demo device), the banner and {@code Main}. The REST API is in {@code rest} and reads only
 * through {@code common}'s ports. Everything here runs on the starting thread, except what the
 * components it builds document for themselves.
 */
@NullMarked
package io.fieldline.server;

import org.jspecify.annotations.NullMarked;
