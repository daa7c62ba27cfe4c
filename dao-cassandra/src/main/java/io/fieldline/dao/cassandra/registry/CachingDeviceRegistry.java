package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DeviceRegistry} decorator that serves the CONNECT lookups from memory: by access token,
 * by MQTT basic login and by certificate fingerprint. A found device is kept for {@code ttl}, an
 * unknown credential (or a wrong password) for {@code negativeTtl}, so a reconnect storm with bad
 * credentials reaches neither Cassandra nor bcrypt, and concurrent lookups of the same credential
 * share one query. Failed lookups are not cached. At most {@code maxSize} lookups are kept: when
 * full, expired entries go first, then arbitrary ones.
 *
 * <p>A basic login is keyed by its client id, its user name and an HMAC-SHA256 of its password
 * under a key drawn at construction ({@link LoginKeys}): a checked password saves the bcrypt check
 * for {@code ttl} without the password being kept, and a wrong password, being another key, can
 * only ever be cached as unknown.
 *
 * <p>{@link #create} caches the new device under its token; {@link #preload} fills the token cache
 * at start. {@link #forget} drops every lookup of a device, and every cached unknown (the device's
 * new credential may be one of them); {@link #delete}, {@link #update} and {@link
 * #replaceCredentials} call it on this node whatever their outcome (one that failed, a timeout say,
 * may have been applied), and the cluster calls it on the others ({@code CredentialsRevocation}). A
 * lookup that was already running when {@code forget} was called may have read the old credential:
 * {@code forget} drops it from the cache too, so its answer is never cached, and if it had not yet
 * finished reading it is asked again before it answers.
 *
 * <p>Never blocks. Thread-safe: a {@link ConcurrentHashMap} of shared futures.
 */
public final class CachingDeviceRegistry implements DeviceRegistry, DeviceCredentialsStore {

  /**
   * Counters of the cache, for metrics and tests.
   *
   * @param hits lookups answered from memory (including joins of an in-flight lookup)
   * @param misses lookups that queried the backing registry
   * @param size lookups cached now
   */
  public record Stats(long hits, long misses, int size) {}

  /** How often a lookup overtaken by {@link #forget} is asked again before it answers uncached. */
  private static final int MAX_REASKS = 3;

  private record TokenKey(String token) {}

  private record CertificateKey(String fingerprint) {}

  private final DeviceRegistry delegate;
  private final DeviceCredentialsStore credentials;
  private final long ttlNanos;
  private final long negativeTtlNanos;
  private final int maxSize;
  private final LongSupplier nanoClock;
  private final LoginKeys loginKeys = new LoginKeys();
  private final Map<Object, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicLong forgets = new AtomicLong();
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  /** A cache configured by {@code fieldline.cassandra.device-cache}. */
  public <R extends DeviceRegistry & DeviceCredentialsStore> CachingDeviceRegistry(
      R delegate, CassandraConfig.DeviceCacheConfig config) {
    this(delegate, config.ttl(), config.negativeTtl(), config.maxSize(), System::nanoTime);
  }

  <R extends DeviceRegistry & DeviceCredentialsStore> CachingDeviceRegistry(
      R delegate, Duration ttl, Duration negativeTtl, int maxSize, LongSupplier nanoClock) {
    this.delegate = delegate;
    this.credentials = delegate;
    this.ttlNanos = ttl.toNanos();
    this.negativeTtlNanos = negativeTtl.toNanos();
    this.maxSize = maxSize;
    this.nanoClock = nanoClock;
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    return lookup(new TokenKey(token), () -> delegate.findByToken(token));
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return lookup(loginKeys.of(login), () -> delegate.findByBasicCredentials(login));
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return lookup(
        new CertificateKey(sha256Fingerprint), () -> delegate.findByCertificate(sha256Fingerprint));
  }

  private CompletionStage<Optional<Device>> lookup(
      Object key, Supplier<CompletionStage<Optional<Device>>> query) {
    long now = nanoClock.getAsLong();
    Entry cached = entries.get(key);
    if (cached != null && cached.isFresh(now)) {
      hits.increment();
      return cached.result.minimalCompletionStage();
    }
    Entry fresh = new Entry();
    Entry winner = entries.compute(key, (k, old) -> old != null && old.isFresh(now) ? old : fresh);
    if (winner != fresh) {
      hits.increment();
      return winner.result.minimalCompletionStage();
    }
    misses.increment();
    evictIfFull(now);
    ask(key, fresh, query, 0);
    return fresh.result.minimalCompletionStage();
  }

  private void ask(
      Object key, Entry entry, Supplier<CompletionStage<Optional<Device>>> query, int reasked) {
    long forgetsBefore = forgets.get();
    query
        .get()
        .whenComplete(
            (device, error) -> {
              if (error != null) {
                entries.remove(key, entry);
                entry.result.completeExceptionally(error);
                return;
              }
              if (forgets.get() != forgetsBefore) {
                // A credential changed while this ran: the answer may predate the change.
                if (reasked < MAX_REASKS) {
                  ask(key, entry, query, reasked + 1);
                  return;
                }
                entries.remove(key, entry);
              }
              entry.expiresAtNanos =
                  nanoClock.getAsLong() + (device.isPresent() ? ttlNanos : negativeTtlNanos);
              entry.result.complete(device);
            });
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return delegate.findById(id);
  }

  @Override
  public CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId device) {
    return credentials.findCredentials(device);
  }

  @Override
  public CompletionStage<Device> create(String name, String type, Optional<String> accessToken) {
    return delegate
        .create(name, type, accessToken)
        .thenApply(
            device -> {
              remember(device);
              return device;
            });
  }

  @Override
  public List<CompletionStage<Device>> createAll(List<NewDevice> devices) {
    return delegate.createAll(devices).stream()
        .map(
            created ->
                created.thenApply(
                    device -> {
                      remember(device);
                      return device;
                    }))
        .toList();
  }

  @Override
  public CompletionStage<Device> createWithCredentials(
      String name, String type, DeviceCredentials deviceCredentials) {
    return credentials
        .createWithCredentials(name, type, deviceCredentials)
        .thenApply(
            device -> {
              // The new credential may be cached as unknown here.
              forget(device.id());
              remember(device);
              return device;
            });
  }

  @Override
  public CompletionStage<Optional<StoredCredentials>> replaceCredentials(
      DeviceId device, DeviceCredentials deviceCredentials) {
    // Forgotten on failure too: a replacement that timed out may still have been applied.
    return credentials
        .replaceCredentials(device, deviceCredentials)
        .whenComplete((replaced, error) -> forget(device));
  }

  /**
   * Caches {@code devices} as found under their access tokens, each for {@code ttl} from now, up to
   * {@code maxSize} entries (a start-up fill: the first devices to connect then cost no read).
   * Devices without a token are skipped: a basic login needs its password to be cached.
   *
   * @return the devices cached
   */
  public int preload(Iterable<Device> devices) {
    int cached = 0;
    for (Device device : devices) {
      if (entries.size() >= maxSize) {
        break;
      }
      if (device.accessToken() != null) {
        remember(device);
        cached++;
      }
    }
    return cached;
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    return delegate.list(pageSize, afterName);
  }

  @Override
  public CompletionStage<Optional<Device>> findByName(String name) {
    return delegate.findByName(name);
  }

  /**
   * {@inheritDoc} Forgets the device's cached lookups whatever the outcome (one that failed may
   * have been applied): they hold its old name, type and label.
   */
  @Override
  public CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    return delegate.update(update).whenComplete((updated, error) -> forget(update.id()));
  }

  @Override
  public CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    return delegate.page(query);
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    // Forgotten on failure too: a delete that timed out may still have been applied.
    return delegate.delete(id).whenComplete((deleted, error) -> forget(id));
  }

  /**
   * Forgets every cached lookup of {@code device} and every cached unknown credential, and drops
   * every lookup still running (of any device: which one it finds is not known yet), which then
   * asks again if it had not finished reading and answers its waiters without being cached: the
   * device's credential changed or it was deleted, here or on another node. A running lookup left
   * in the cache could have read the old credential just before the change and be cached for {@code
   * ttl}. Cheap (one pass over the cache); idempotent; any thread.
   */
  public void forget(DeviceId device) {
    forgets.incrementAndGet();
    entries.values().removeIf(entry -> entry.mayHoldOldCredentialOf(device));
  }

  /** Caches {@code device} as found under its token, replacing whatever was cached. */
  private void remember(Device device) {
    String token = device.accessToken();
    if (token == null) {
      return;
    }
    Entry entry = new Entry();
    entry.expiresAtNanos = nanoClock.getAsLong() + ttlNanos;
    entry.result.complete(Optional.of(device));
    evictIfFull(nanoClock.getAsLong());
    entries.put(new TokenKey(token), entry);
  }

  /** The cache counters. */
  public Stats stats() {
    return new Stats(hits.sum(), misses.sum(), entries.size());
  }

  private void evictIfFull(long now) {
    if (entries.size() <= maxSize) {
      return;
    }
    entries.values().removeIf(entry -> entry.isExpired(now));
    Iterator<Entry> it = entries.values().iterator();
    while (entries.size() > maxSize && it.hasNext()) {
      it.next();
      it.remove();
    }
  }

  private static final class Entry {
    final CompletableFuture<Optional<Device>> result = new CompletableFuture<>();
    // Written before result completes, read after checking isDone(): the future publishes it.
    volatile long expiresAtNanos;

    boolean isFresh(long now) {
      return !result.isDone() || (!result.isCompletedExceptionally() && now - expiresAtNanos < 0);
    }

    boolean isExpired(long now) {
      return result.isDone() && now - expiresAtNanos >= 0;
    }

    boolean mayHoldOldCredentialOf(DeviceId id) {
      if (!result.isDone()) {
        // Running: it may be this device's, read before the change.
        return true;
      }
      if (result.isCompletedExceptionally()) {
        return false;
      }
      @Nullable Device device = result.getNow(Optional.empty()).orElse(null);
      return device == null || device.id().equals(id);
    }
  }
}
