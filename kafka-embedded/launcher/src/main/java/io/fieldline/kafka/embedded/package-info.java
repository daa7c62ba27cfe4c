/**
 * Runs a real Apache Kafka 4 broker (KRaft, broker and controller in one node) in a child JVM on
 * 127.0.0.1: for integration tests of the Kafka sink and for {@code ./fieldline kafka} ({@link
 * io.fieldline.kafka.embedded.EmbeddedKafkaMain}). The entry point is {@link
 * io.fieldline.kafka.embedded.EmbeddedKafka}; the package-private classes write the broker's files
 * and command lines. The broker's jars (kafka_2.13) are never on this module's classpath: the child
 * runs from the classpath file that {@code kafka-embedded/runtime} writes.
 */
@NullMarked
package io.fieldline.kafka.embedded;

import org.jspecify.annotations.NullMarked;
