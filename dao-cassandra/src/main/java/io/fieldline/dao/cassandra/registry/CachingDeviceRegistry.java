package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.Device;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.MqttBasicLogin;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A {@link DeviceRegistry} decorator that serves {@link #findByToken} (the CONNECT path) from
 * memory: a found device for {@code ttl}, an unknown token for {@code negativeTtl} (so a reconnect
 * storm with bad tokens does not reach Cassandra), and concurrent lookups of the same token share
 * one query. Failed lookups are not cached. {@link #create} caches the new device (replacing a
 * cached "unknown"), {@link #preload} fills the cache at start, and {@link #delete} evicts the
 * device's token at once; other nodes' caches keep a deleted device until their {@code ttl}
 * expires. At most {@code maxSize} tokens are kept: when full, expired entries go first, then
 * arbitrary ones.
 *
 * <p>Never blocks. Thread-safe: a {@link ConcurrentHashMap} of shared futures.
 */
public final class CachingDeviceRegistry implements DeviceRegistry {

  /**
   * Counters of the cache, for metrics and tests.
   *
   * @param hits lookups answered from memory (including joins of an in-flight lookup)
   * @param misses lookups that queried the backing registry
   * @param size tokens cached now
   */
  public record Stats(long hits, long misses, int size) {}

  private final DeviceRegistry delegate;
  private final long ttlNanos;
  private final long negativeTtlNanos;
  private final int maxSize;
  private final LongSupplier nanoClock;
  private final Map<String, Entry> byToken = new ConcurrentHashMap<>();
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  /** A cache configured by {@code fieldline.cassandra.device-cache}. */
  public CachingDeviceRegistry(DeviceRegistry delegate, CassandraConfig.DeviceCacheConfig config) {
    this(delegate, config.ttl(), config.negativeTtl(), config.maxSize(), System::nanoTime);
  }

  CachingDeviceRegistry(
      DeviceRegistry delegate,
      Duration ttl,
      Duration negativeTtl,
      int maxSize,
      LongSupplier nanoClock) {
    this.delegate = delegate;
    this.ttlNanos = ttl.toNanos();
    this.negativeTtlNanos = negativeTtl.toNanos();
    this.maxSize = maxSize;
    this.nanoClock = nanoClock;
  }

  @Override
  public CompletionStage<Optional<Device>> findByToken(String token) {
    long now = nanoClock.getAsLong();
    Entry cached = byToken.get(token);
    if (cached != null && cached.isFresh(now)) {
      hits.increment();
      return cached.result.minimalCompletionStage();
    }
    Entry fresh = new Entry();
    Entry winner =
        byToken.compute(token, (key, old) -> old != null && old.isFresh(now) ? old : fresh);
    if (winner != fresh) {
      hits.increment();
      return winner.result.minimalCompletionStage();
    }
    misses.increment();
    evictIfFull(now);
    delegate
        .findByToken(token)
        .whenComplete(
            (device, error) -> {
              if (error != null) {
                byToken.remove(token, fresh);
                fresh.result.completeExceptionally(error);
                return;
              }
              fresh.expiresAtNanos =
                  nanoClock.getAsLong() + (device.isPresent() ? ttlNanos : negativeTtlNanos);
              fresh.result.complete(device);
            });
    return fresh.result.minimalCompletionStage();
  }

  @Override
  public CompletionStage<Optional<Device>> findByBasicCredentials(MqttBasicLogin login) {
    return delegate.findByBasicCredentials(login);
  }

  @Override
  public CompletionStage<Optional<Device>> findByCertificate(String sha256Fingerprint) {
    return delegate.findByCertificate(sha256Fingerprint);
  }

  @Override
  public CompletionStage<Optional<Device>> findById(DeviceId id) {
    return delegate.findById(id);
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

  /**
   * Caches {@code devices} as found, each for {@code ttl} from now, up to {@code maxSize} entries
   * (a start-up fill: the first devices to connect then cost no read).
   *
   * @return the devices cached
   */
  public int preload(Iterable<Device> devices) {
    int cached = 0;
    for (Device device : devices) {
      if (byToken.size() >= maxSize) {
        break;
      }
      remember(device);
      cached++;
    }
    return cached;
  }

  @Override
  public CompletionStage<List<Device>> list(int pageSize, Optional<String> afterName) {
    return delegate.list(pageSize, afterName);
  }

  @Override
  public CompletionStage<Boolean> delete(DeviceId id) {
    return delegate
        .delete(id)
        .thenApply(
            deleted -> {
              invalidateDevice(id);
              return deleted;
            });
  }

  /** Caches {@code device} as found under its token, replacing whatever was cached. */
  private void remember(Device device) {
    Entry entry = new Entry();
    entry.expiresAtNanos = nanoClock.getAsLong() + ttlNanos;
    entry.result.complete(Optional.of(device));
    evictIfFull(nanoClock.getAsLong());
    byToken.put(device.accessToken(), entry);
  }

  /** Forgets every token cached for the device. */
  private void invalidateDevice(DeviceId id) {
    byToken.values().removeIf(entry -> entry.isDevice(id));
  }

  /** The cache counters. */
  public Stats stats() {
    return new Stats(hits.sum(), misses.sum(), byToken.size());
  }

  private void evictIfFull(long now) {
    if (byToken.size() <= maxSize) {
      return;
    }
    byToken.values().removeIf(entry -> entry.isExpired(now));
    Iterator<Entry> it = byToken.values().iterator();
    while (byToken.size() > maxSize && it.hasNext()) {
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

    boolean isDevice(DeviceId id) {
      if (!result.isDone() || result.isCompletedExceptionally()) {
        return false;
      }
      Optional<Device> device = result.getNow(Optional.empty());
      return device.isPresent() && device.get().id().equals(id);
    }
  }
}
