package io.fieldline.perf.provision;

/** One line of the feeder file: device name, id (UUID) and access token. */
public record ProvisionedDevice(String name, String id, String token) {}
