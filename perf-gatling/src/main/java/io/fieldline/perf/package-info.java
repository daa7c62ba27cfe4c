/**
 * Load testing for Fieldline: a Gatling MQTT protocol of our own ({@code mqtt}), ThingsBoard
 * telemetry payloads ({@code telemetry}), device provisioning over the REST API ({@code
 * provision}), the check that every acknowledged message is stored ({@code verify}), the raw-driver
 * ceiling writer ({@code raw}) and the benchmark summary ({@code report}). None of it is part of
 * the server.
 */
@NullMarked
package io.fieldline.perf;

import org.jspecify.annotations.NullMarked;
