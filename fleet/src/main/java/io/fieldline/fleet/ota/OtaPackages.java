package io.fieldline.fleet.ota;

import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.ota.FirmwareSource;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.TelemetryQueries;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The fleet's OTA side, built once by the composition root and handed to the REST API (packages,
 * uploads, assignments) and, as the {@link FirmwareSource} of their downloads, to both device
 * transports. Downloads read through one {@link FirmwareCache} over the store. Immutable; its parts
 * are thread-safe.
 */
public final class OtaPackages {

  private final OtaPackageStore store;
  private final OtaConfig config;
  private final FirmwareCache cache;
  private final OtaMetrics metrics;
  private final FirmwareAssignments assignments;

  /**
   * @param store packages, data and assignments (the Cassandra store)
   * @param registry devices, for the clean-up of deleted devices' assignments
   * @param profiles device profiles: the devices a profile's firmware goes to
   * @param telemetry where the {@code fw_*} shared attributes are written
   * @param queries where they are read, to write only what changed
   * @param events where their change is published (the device's session pushes it)
   * @param config {@code fieldline.ota}
   */
  public OtaPackages(
      OtaPackageStore store,
      DeviceRegistry registry,
      DeviceProfileStore profiles,
      TelemetryStore telemetry,
      TelemetryQueries queries,
      DeviceEvents events,
      OtaConfig config,
      MeterRegistry meters) {
    this.store = store;
    this.config = config;
    this.cache = new FirmwareCache(store, config.dataCacheBytes());
    this.metrics = new OtaMetrics(meters);
    this.assignments =
        new FirmwareAssignments(
            store,
            registry,
            profiles,
            telemetry,
            queries,
            events,
            metrics,
            System::currentTimeMillis);
  }

  public OtaPackageStore store() {
    return store;
  }

  public OtaConfig config() {
    return config;
  }

  // No close: profiles' fan-outs run on storage threads and the JDK's delayed executor; one still
  // running when the server stops is dropped (see ProfileFanOuts).

  public FirmwareAssignments assignments() {
    return assignments;
  }

  /**
   * {@code profiles} whose assignment of a profile to a device also brings the device's {@code
   * fw_*} attributes up to date with that profile's firmware: for provisioning, which gives new
   * devices their profile.
   */
  public DeviceProfileStore firmwareFollowing(DeviceProfileStore profiles) {
    return new FirmwareFollowingProfiles(profiles, assignments);
  }

  /** The meters of uploads, assignments and firmware syncs ({@code fieldline.ota.*}). */
  public OtaMetrics metrics() {
    return metrics;
  }

  /**
   * Where firmware downloads read, over MQTT and HTTP alike: the assigned packages, their data
   * through the cache of stored chunks.
   */
  public FirmwareSource firmwareSource() {
    return cache;
  }
}
