/**
 * The composition root: configuration, wiring of transport, actors and storage, the REST API,
 * metrics, health, and the embedded-default start.
 */
@NullMarked
package io.fieldline.server;

import org.jspecify.annotations.NullMarked;
