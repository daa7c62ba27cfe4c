/**
 * The {@code KAFKA} sink type: {@link io.fieldline.export.sink.kafka.KafkaSinkFactory} checks a
 * sink's configuration, {@link io.fieldline.export.sink.kafka.KafkaSink} delivers its batches to a
 * topic with the official idempotent producer, keyed by device id (one partition per device, so
 * per-device order holds). Last step of the way out: the exporter hands it batches cut by its
 * {@link io.fieldline.export.sink.Batching}.
 */
@NullMarked
package io.fieldline.export.sink.kafka;

import org.jspecify.annotations.NullMarked;
