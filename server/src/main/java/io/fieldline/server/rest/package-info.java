/** The ThingsBoard-compatible REST API, health and metrics endpoints (Pekko HTTP). */
@NullMarked
package io.fieldline.server.rest;

import org.jspecify.annotations.NullMarked;
