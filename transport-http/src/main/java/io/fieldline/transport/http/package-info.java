/**
 * ThingsBoard's HTTP device API ({@code /api/v1/{token}/...}), served as Pekko HTTP routes on the
 * server's HTTP listener: telemetry and attribute uploads answered after the write, attribute
 * reads, long polls for shared-attribute updates and server-side RPC, RPC replies and client-side
 * RPC, firmware downloads, and self-provisioning ({@code POST /api/v1/provision}). See
 * docs/http-device-api.md.
 *
 * <p>Other modules use {@link io.fieldline.transport.http.DeviceApi} and its {@link
 * io.fieldline.transport.http.DeviceApiConfig}, plus what the server's HTTP front-ends share with
 * it: {@link io.fieldline.transport.http.HttpErrors} (ThingsBoard's error answers) and {@link
 * io.fieldline.transport.http.ClientConnection} (set on each request by the server's listener). The
 * device API reads and writes through {@code common}'s ports and the device bounds of {@code
 * transport-common} only.
 */
@NullMarked
package io.fieldline.transport.http;

import org.jspecify.annotations.NullMarked;
