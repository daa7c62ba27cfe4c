/**
 * ThingsBoard's HTTP device API ({@code /api/v1/{token}/...}) on the server's HTTP listener:
 * telemetry and attribute uploads answered after the write, attribute reads, long polls for
 * shared-attribute updates and server-side RPC, RPC replies and client-side RPC, firmware
 * downloads, and self-provisioning ({@code POST /api/v1/provision}). See docs/http-device-api.md.
 */
@NullMarked
package io.fieldline.server.devhttp;

import org.jspecify.annotations.NullMarked;
