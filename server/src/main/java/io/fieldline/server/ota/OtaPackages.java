package io.fieldline.server.ota;

import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.TelemetryQueries;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.transport.mqtt.FirmwareConfig;
import io.fieldline.transport.mqtt.FirmwareDelivery;
import io.fieldline.transport.mqtt.FirmwareMetrics;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The server's OTA side, built once by the composition root and handed to the REST API (packages,
 * uploads, assignments), the HTTP device API and the MQTT transport (downloads). Downloads read
 * through one {@link FirmwareCache} over the store; both protocols count in one {@link
 * FirmwareMetrics}. Immutable; its parts are thread-safe.
 */
public final class OtaPackages {

  private final OtaPackageStore store;
  private final OtaConfig config;
  private final FirmwareConfig firmwareConfig;
  private final FirmwareCache cache;
  private final FirmwareMetrics firmwareMetrics;
  private final FirmwareAssignments assignments;
  private final PackageUpload uploads;

  /**
   * @param store packages, data and assignments (the Cassandra store)
   * @param registry devices, for the clean-up of deleted devices' assignments
   * @param profiles device profiles: the devices a profile's firmware goes to
   * @param telemetry where the {@code fw_*} shared attributes are written
   * @param queries where they are read, to write only what changed
   * @param events where their change is published (the device's session pushes it)
   * @param config {@code fieldline.ota}
   * @param firmwareConfig {@code fieldline.mqtt.firmware}, the chunk bounds of downloads
   */
  public OtaPackages(
      OtaPackageStore store,
      DeviceRegistry registry,
      DeviceProfileStore profiles,
      TelemetryStore telemetry,
      TelemetryQueries queries,
      DeviceEvents events,
      OtaConfig config,
      FirmwareConfig firmwareConfig,
      MeterRegistry meters) {
    this.store = store;
    this.config = config;
    this.firmwareConfig = firmwareConfig;
    this.cache = new FirmwareCache(store, config.dataCacheBytes());
    this.firmwareMetrics = new FirmwareMetrics(meters);
    OtaMetrics metrics = new OtaMetrics(meters);
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
    this.uploads = new PackageUpload(store, config, metrics);
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

  public PackageUpload uploads() {
    return uploads;
  }

  /** What firmware downloads are served with, over MQTT and HTTP alike. */
  public FirmwareDelivery delivery() {
    return new FirmwareDelivery(firmwareConfig, cache, firmwareMetrics);
  }
}
