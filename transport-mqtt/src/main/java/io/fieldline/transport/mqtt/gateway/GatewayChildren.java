package io.fieldline.transport.mqtt.gateway;

import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.DeviceUpdate;
import io.fieldline.common.GatewayLink;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.netty.util.concurrent.EventExecutor;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The child devices a gateway session has in use, by name: each found in the device registry or
 * created there (named as the gateway sent it, with its type), and linked to the gateway through
 * its additional info ({@link GatewayLink}: {@code lastConnectedGateway}). What the session's
 * messages are submitted with, and what a later downlink to a child finds its device by.
 *
 * <p><b>Resolving a name</b> the session does not hold: look it up by name; if there is no such
 * device, create it; then, unless it is already linked to this gateway, link it (an update of its
 * additional info, other keys kept). A device linked to another gateway is taken over
 * (ThingsBoard's "last connected gateway"); a device that is itself a gateway, or this gateway, is
 * used but never linked as a child. A create that finds the name taken — another gateway, or a REST
 * call, created it meanwhile — uses that device instead (after at most {@value #CREATE_ATTEMPTS}
 * tries). A failed resolution is forgotten, so the next message resolves the name again.
 *
 * <p><b>Bounds.</b> Lookups and links run at most {@code registry-concurrency} at once; creations
 * one at a time, since each reserves its name by a lightweight transaction on the one partition
 * ({@code device_by_name} bucket 0) every creation contends on. The session holds at most {@code
 * max-children} names: the caller checks {@link #newNames} against {@link #size} before asking for
 * more; {@link #disconnect} frees a name.
 *
 * <p>The session keeps its resolutions: a child renamed, relinked or deleted over REST while the
 * gateway holds it keeps the device (id) it had until the gateway disconnects it or reconnects.
 *
 * <p>Confined to the channel's event loop; every future it returns completes there.
 */
final class GatewayChildren {

  private static final Logger LOG = LoggerFactory.getLogger(GatewayChildren.class);
  private static final int CREATE_ATTEMPTS = 3;

  private final DeviceRegistry registry;
  private final Device gateway;
  private final MqttMetrics metrics;
  private final String logPrefix;
  private final BoundedCalls registryCalls;
  private final BoundedCalls creations;
  // Name → the device it resolves (or is resolving) to. Resolutions in progress count.
  private final Map<String, CompletableFuture<Device>> children = new HashMap<>();

  GatewayChildren(
      DeviceRegistry registry,
      Device gateway,
      MqttMetrics metrics,
      int registryConcurrency,
      EventExecutor eventLoop,
      BooleanSupplier open,
      String logPrefix) {
    this.registry = registry;
    this.gateway = gateway;
    this.metrics = metrics;
    this.logPrefix = logPrefix;
    this.registryCalls = new BoundedCalls(registryConcurrency, eventLoop, open);
    this.creations = new BoundedCalls(1, eventLoop, open);
  }

  /** Names the session holds (resolved or being resolved). */
  int size() {
    return children.size();
  }

  /** How many of {@code names} the session does not hold yet. */
  int newNames(Collection<String> names) {
    int fresh = 0;
    for (String name : names) {
      if (!children.containsKey(name)) {
        fresh++;
      }
    }
    return fresh;
  }

  /** The resolution of {@code name}, already held or started now (created with {@code type}). */
  CompletableFuture<Device> child(String name, String type) {
    CompletableFuture<Device> held = children.get(name);
    if (held != null) {
      return held;
    }
    CompletableFuture<Device> resolving =
        registryCalls
            .call(() -> registry.findByName(name))
            .thenCompose(
                found ->
                    found.isPresent()
                        ? CompletableFuture.completedFuture(found.get())
                        : creations.call(() -> create(name, type, 1)))
            .thenCompose(this::linked);
    children.put(name, resolving);
    // Completes on the event loop (BoundedCalls): the map is touched there only.
    resolving.whenComplete(
        (device, error) -> {
          if (error != null) {
            children.remove(name, resolving);
          }
        });
    return resolving;
  }

  /** The gateway disconnected {@code name}: the session lets it go. */
  boolean disconnect(String name) {
    return children.remove(name) != null;
  }

  /** Names held, for tests and diagnostics. */
  Set<String> names() {
    return new HashSet<>(children.keySet());
  }

  // On a driver thread (or wherever the registry completes): nothing of the session is touched.
  private CompletionStage<Device> create(String name, String type, int attempt) {
    return registry
        .create(name, type, Optional.empty())
        .thenApply(
            device -> {
              metrics.gatewayChildCreated();
              LOG.debug("{} created child device {} ({})", logPrefix, device.id(), type);
              return device;
            })
        .exceptionallyCompose(
            error -> {
              Throwable cause = BoundedCalls.unwrapped(error);
              if (!(cause instanceof DeviceConflictException) || attempt >= CREATE_ATTEMPTS) {
                return CompletableFuture.failedFuture(cause);
              }
              // Taken meanwhile (another gateway, a REST call): use that device. Not found yet
              // (a create half-way), or a generated token that collided: try again.
              return registry
                  .findByName(name)
                  .thenCompose(
                      found ->
                          found.isPresent()
                              ? CompletableFuture.completedFuture(found.get())
                              : create(name, type, attempt + 1));
            });
  }

  // On the event loop.
  private CompletionStage<Device> linked(Device device) {
    boolean linked = GatewayLink.gatewayOf(device).filter(gateway.id()::equals).isPresent();
    if (linked || device.id().equals(gateway.id()) || GatewayLink.isGateway(device)) {
      return CompletableFuture.completedFuture(device);
    }
    DeviceUpdate link =
        new DeviceUpdate(
            device.id(),
            device.name(),
            device.type(),
            device.label(),
            GatewayLink.linked(device.additionalInfoJson(), gateway.id()));
    return registryCalls
        .call(() -> registry.update(link))
        .thenApply(
            updated ->
                updated.orElseThrow(
                    () ->
                        new IllegalStateException(
                            "child device "
                                + device.id()
                                + " was deleted while it was linked to its gateway")));
  }
}
