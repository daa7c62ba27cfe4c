/**
 * Server-side RPC: the calls the REST API makes to devices, how long they wait, what they answer,
 * and the life of persistent requests. Devices are reached through {@code common}'s {@code
 * DeviceEvents}, on this node or any other; see docs/rest-api.md and docs/architecture.md.
 */
@NullMarked
package io.fieldline.fleet.rpc;

import org.jspecify.annotations.NullMarked;
