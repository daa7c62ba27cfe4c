package io.fieldline.transport.mqtt.gateway;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceRegistry.NewDevice;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.device.GatewayLink;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.GatewayRefusal;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.ChildCreationPermits;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The child devices a gateway session has in use, by name: each found in the device registry or
 * created there (named as the gateway sent it, with its type), owned by the gateway and linked to
 * it through its additional info ({@link GatewayLink}: {@code ownerGateway}, {@code
 * lastConnectedGateway}). What the session's messages are submitted with, and what a later downlink
 * to a child finds its device by.
 *
 * <p><b>Resolving a name</b> the session does not hold: look it up by name; if there is no such
 * device, create it, owned by the gateway. A device found is used only if the gateway may act for
 * it: it is the gateway itself, or the gateway owns it (created it, or an administrator linked it),
 * or — with {@code gateway.adopt-existing-devices} — no gateway owns it and it is not a gateway
 * (the gateway then becomes its owner). Otherwise the resolution fails with a {@link
 * GatewayRefusedException} ({@code not_owner}) and the message naming it is refused whole: unlike
 * ThingsBoard, a gateway never takes over another gateway's child or a device created over REST. A
 * device used is linked (an update of its additional info, other keys kept) unless it already is; a
 * gateway is never linked as a child. A create that finds the name taken — another gateway, or a
 * REST call, created it meanwhile — checks that device as one found (after at most {@value
 * #CREATE_ATTEMPTS} tries). A failed resolution is forgotten, so the next message resolves the name
 * again (an administrator's link applies from the next message).
 *
 * <p><b>Creating in bulk.</b> Names found missing are created together: one {@link
 * DeviceRegistry#createAll} call at a time per session, taking every name that went missing while
 * the previous call ran (at most {@value #MAX_CREATE} per call), each created already owned by and
 * linked to the gateway. A gateway's first message naming a hundred new children thus costs a few
 * bulk calls, not a hundred creations: every creation reserves its name by a lightweight
 * transaction on the one partition every creation contends on ({@code device_by_name} bucket 0),
 * and a bulk call reserves all its names in one.
 *
 * <p><b>Bounds.</b> Lookups, links and the lone creates after a conflict run at most {@code
 * registry-concurrency} at once; bulk creations one at a time. Every creation also takes a permit
 * of the node's {@link ChildCreationPermits} ({@code max-concurrent-creations}, all gateways
 * together); while one waits for its permit the session's {@link Turns} pauses reading the socket.
 * The session holds at most {@code max-children} names: the caller checks a message's names ({@link
 * #checkRoom}) before asking for them; {@link #disconnect} frees a name.
 *
 * <p><b>Watching.</b> Once a name is resolved (and still held) its {@link Watcher} hears of it, and
 * again when the gateway disconnects it: the session's downlink listens to the child's events in
 * between.
 *
 * <p>The session keeps its resolutions: a child renamed, relinked or deleted over REST while the
 * gateway holds it keeps the device (id) it had until the gateway disconnects it or reconnects.
 *
 * <p>Confined to the channel's event loop; every future it returns completes there.
 */
final class GatewayChildren {

  private static final Logger LOG = LoggerFactory.getLogger(GatewayChildren.class);
  private static final int CREATE_ATTEMPTS = 3;

  /** The most names one bulk creation takes. */
  static final int MAX_CREATE = 100;

  /** Hears which children the session holds. Called on the event loop. */
  interface Watcher {
    /** {@code name} now resolves to {@code device}. */
    void held(String name, Device device);

    /** The session let {@code name} go. */
    void released(String name);
  }

  /** Hears when the session waits for the node's creation permits. Called on the event loop. */
  interface Turns {
    /** A creation of the session waits for a permit, and none did before. */
    void waiting();

    /** No creation of the session waits for a permit any more. */
    void resumed();
  }

  private final DeviceRegistry registry;
  private final Device gateway;
  private final MqttMetrics metrics;
  private final String logPrefix;
  private final BoundedCalls registryCalls;
  private final BoundedCalls creations;
  private final ChildCreationPermits permits;
  private final EventExecutor eventLoop;
  private final BooleanSupplier open;
  private final Turns turns;
  private final int maxChildren;
  private final boolean adopt;
  private final Watcher watcher;
  // Creations of this session waiting for a permit of the node.
  private int waitingForPermits;
  // Name → the device it resolves (or is resolving) to. Resolutions in progress count.
  private final Map<String, CompletableFuture<Device>> children = new HashMap<>();
  // Names found missing, waiting for the next bulk creation (the one running, if any, excluded).
  private final Map<String, Missing> missing = new LinkedHashMap<>();

  private record Missing(String name, String type, CompletableFuture<Device> created) {}

  GatewayChildren(
      DeviceRegistry registry,
      Device gateway,
      MqttMetrics metrics,
      MqttTransportConfig.Gateway bounds,
      ChildCreationPermits permits,
      EventExecutor eventLoop,
      BooleanSupplier open,
      String logPrefix,
      Turns turns,
      Watcher watcher) {
    this.registry = registry;
    this.permits = permits;
    this.eventLoop = eventLoop;
    this.open = open;
    this.turns = turns;
    this.adopt = bounds.adoptExistingDevices();
    this.gateway = gateway;
    this.metrics = metrics;
    this.logPrefix = logPrefix;
    this.maxChildren = bounds.maxChildren();
    this.watcher = watcher;
    int registryConcurrency = bounds.registryConcurrency();
    this.registryCalls = new BoundedCalls(registryConcurrency, eventLoop, open);
    this.creations = new BoundedCalls(1, eventLoop, open);
  }

  /** Names the session holds (resolved or being resolved). */
  int size() {
    return children.size();
  }

  /**
   * Checks that the session may hold {@code names} (a message's children) within {@code
   * max-children}.
   *
   * @throws GatewayRefusedException when the names it does not hold yet would take it beyond
   */
  void checkRoom(Collection<String> names) {
    int fresh = 0;
    for (String name : names) {
      if (!children.containsKey(name)) {
        fresh++;
      }
    }
    if (fresh > 0 && children.size() + fresh > maxChildren) {
      throw new GatewayRefusedException(
          GatewayRefusal.TOO_MANY_CHILDREN,
          "the message would bring the gateway's session to "
              + (children.size() + fresh)
              + " child devices, more than "
              + maxChildren);
    }
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
                found -> found.isPresent() ? authorized(name, found.get()) : created(name, type))
            .thenCompose(this::linked);
    children.put(name, resolving);
    // Completes on the event loop (BoundedCalls): the map is touched there only.
    resolving.whenComplete(
        (device, error) -> {
          if (error != null) {
            children.remove(name, resolving);
          } else if (children.get(name) == resolving) {
            watcher.held(name, device);
          }
        });
    return resolving;
  }

  /** The gateway disconnected {@code name}: the session lets it go. */
  boolean disconnect(String name) {
    if (children.remove(name) == null) {
      return false;
    }
    watcher.released(name);
    return true;
  }

  /** Names held, for tests and diagnostics. */
  Set<String> names() {
    return new HashSet<>(children.keySet());
  }

  // On the event loop: `name` was looked up and not found; it joins the next bulk creation (or
  // the creation already waiting for it).
  private CompletableFuture<Device> created(String name, String type) {
    Missing waiting = missing.get(name);
    if (waiting != null) {
      return waiting.created();
    }
    Missing wanted = new Missing(name, type, new CompletableFuture<>());
    missing.put(name, wanted);
    if (creations.running() == 0) {
      createMissing();
    }
    return wanted.created();
  }

  // On the event loop: one bulk creation of what is missing, then the next, until none is.
  private void createMissing() {
    if (missing.isEmpty()) {
      return;
    }
    List<Missing> batch = new ArrayList<>(Math.min(missing.size(), MAX_CREATE));
    Iterator<Missing> waiting = missing.values().iterator();
    while (waiting.hasNext() && batch.size() < MAX_CREATE) {
      batch.add(waiting.next());
      waiting.remove();
    }
    creations
        .call(() -> permitted(() -> createAll(batch)))
        .whenComplete(
            (settled, error) -> {
              try {
                for (int i = 0; i < batch.size(); i++) {
                  if (error != null) {
                    batch.get(i).created().completeExceptionally(error);
                  } else {
                    settle(batch.get(i), settled.get(i));
                  }
                }
              } finally {
                createMissing();
              }
            });
  }

  // On the event loop; completes wherever the registry completes, where nothing of the session is
  // touched, once every creation of the batch has settled (each with its device or its error).
  private CompletionStage<List<CompletableFuture<Device>>> createAll(List<Missing> batch) {
    String link = GatewayLink.owned(null, gateway.id());
    List<CompletableFuture<Device>> settled =
        registry
            .createAll(
                batch.stream()
                    .map(wanted -> new NewDevice(wanted.name(), wanted.type(), link))
                    .toList())
            .stream()
            .map(CompletionStage::toCompletableFuture)
            .toList();
    if (settled.size() != batch.size()) {
      throw new IllegalStateException(
          "the registry answered " + settled.size() + " creations for " + batch.size());
    }
    return CompletableFuture.allOf(settled.toArray(CompletableFuture<?>[]::new))
        .handle((done, error) -> settled);
  }

  // On the event loop, with the creation's outcome (settled). A name taken meanwhile (another
  // gateway, a REST call) means use that device.
  private void settle(Missing wanted, CompletableFuture<Device> outcome) {
    outcome.whenComplete(
        (device, error) -> {
          if (error == null) {
            metrics.gatewayChildCreated();
            LOG.debug("{} created child device {} ({})", logPrefix, device.id(), wanted.type());
            wanted.created().complete(device);
            return;
          }
          retried(wanted.name(), wanted.type(), BoundedCalls.unwrapped(error), 1)
              .whenComplete(
                  (found, failure) -> {
                    if (failure != null) {
                      wanted.created().completeExceptionally(failure);
                    } else {
                      wanted.created().complete(found);
                    }
                  });
        });
  }

  // On the event loop: after a conflict, the device of that name (if the gateway may act for it);
  // if there is none yet (a create half-way) or a generated token collided, a create of that name
  // alone.
  private CompletableFuture<Device> retried(
      String name, String type, Throwable cause, int attempt) {
    if (!(cause instanceof DeviceConflictException) || attempt >= CREATE_ATTEMPTS) {
      return CompletableFuture.failedFuture(cause);
    }
    return registryCalls
        .call(() -> registry.findByName(name))
        .thenCompose(
            found ->
                found.isPresent()
                    ? authorized(name, found.get())
                    : registryCalls
                        .call(() -> permitted(() -> createOne(name, type)))
                        .thenApply(
                            device -> {
                              metrics.gatewayChildCreated();
                              return device;
                            })
                        .exceptionallyCompose(
                            error ->
                                retried(name, type, BoundedCalls.unwrapped(error), attempt + 1)));
  }

  // Completes wherever the registry completes.
  private CompletionStage<Device> createOne(String name, String type) {
    return registry
        .createAll(List.of(new NewDevice(name, type, GatewayLink.owned(null, gateway.id()))))
        .get(0);
  }

  // On the event loop: `call` (a creation) once the node grants a permit; while it waits, reading
  // the socket pauses. A session closed meanwhile creates nothing (its permit passes on at once).
  private <T> CompletionStage<T> permitted(Supplier<? extends CompletionStage<T>> call) {
    return permits.run(
        () ->
            open.getAsBoolean()
                ? call.get()
                : CompletableFuture.failedFuture(new IllegalStateException("connection closed")),
        eventLoop,
        () -> {
          if (waitingForPermits++ == 0) {
            turns.waiting();
          }
        },
        () -> {
          if (--waitingForPermits == 0) {
            turns.resumed();
          }
        });
  }

  // On the event loop: `device`, found by `name`, if this gateway may act for it; else refused.
  private CompletableFuture<Device> authorized(String name, Device device) {
    if (device.id().equals(gateway.id())) {
      return CompletableFuture.completedFuture(device);
    }
    Optional<DeviceId> owner = GatewayLink.ownerOf(device);
    if (owner.filter(gateway.id()::equals).isPresent()
        || (adopt && owner.isEmpty() && !GatewayLink.isGateway(device))) {
      return CompletableFuture.completedFuture(device);
    }
    return CompletableFuture.failedFuture(
        new GatewayRefusedException(
            GatewayRefusal.NOT_OWNER,
            "device '"
                + LogSafe.text(name)
                + "' was not created by this gateway nor linked to it by an administrator"
                + " (additionalInfo.ownerGateway)"));
  }

  // On the event loop: the device owned by and linked to the gateway (a child created before
  // owners were recorded, adopted or linked by an administrator gets both keys now).
  private CompletionStage<Device> linked(Device device) {
    if (device.id().equals(gateway.id())
        || GatewayLink.isGateway(device)
        || GatewayLink.isOwnedBy(device, gateway.id())) {
      return CompletableFuture.completedFuture(device);
    }
    DeviceUpdate link =
        new DeviceUpdate(
            device.id(),
            device.name(),
            device.type(),
            device.label(),
            GatewayLink.owned(device.additionalInfoJson(), gateway.id()));
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
