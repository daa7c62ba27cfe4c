package io.fieldline.dao.cassandra.registry;

import at.favre.lib.crypto.bcrypt.BCrypt;
import at.favre.lib.crypto.bcrypt.LongPasswordStrategies;
import io.fieldline.common.StoreException;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * bcrypt of MQTT_BASIC passwords (the {@code at.favre.lib:bcrypt} library, version {@code $2b$}, a
 * random 16-byte salt per hash), on a small executor of its own: a hash or a check costs tens of
 * milliseconds of CPU, which must never run on a Netty event loop, a Pekko dispatcher or a driver
 * I/O thread. The executor is bounded: {@code threads} named {@code fieldline-bcrypt-N}, at most
 * {@code maxQueued} tasks waiting; a task beyond that fails at once with {@link StoreException}
 * {@code OVERLOADED} (a CONNECT is then refused as "server unavailable" and the device retries), so
 * a reconnect storm costs bounded memory and bounded waiting.
 *
 * <p>Checks compare in constant time (the library's {@code equalsConstantTime}). Passwords longer
 * than bcrypt's 72 bytes are first hashed with SHA-512 (the library's {@code hashSha512} strategy)
 * instead of being cut, so two long passwords with the same first 72 bytes stay different.
 *
 * <p>Thread-safe. Stages complete on the executor's threads.
 */
final class PasswordHashing implements AutoCloseable {

  private static final BCrypt.Version VERSION = BCrypt.Version.VERSION_2B;

  private final int cost;
  private final ThreadPoolExecutor executor;
  private final BCrypt.Hasher hasher =
      BCrypt.with(VERSION, LongPasswordStrategies.hashSha512(VERSION));
  private final BCrypt.Verifyer verifyer =
      BCrypt.verifyer(VERSION, LongPasswordStrategies.hashSha512(VERSION));

  PasswordHashing(CassandraConfig.PasswordHashingConfig config) {
    this.cost = config.cost();
    BlockingQueue<Runnable> queue =
        config.maxQueued() == 0
            ? new SynchronousQueue<>()
            : new ArrayBlockingQueue<>(config.maxQueued());
    AtomicInteger count = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            config.threads(),
            config.threads(),
            0,
            TimeUnit.MILLISECONDS,
            queue,
            runnable -> {
              Thread thread = new Thread(runnable, "fieldline-bcrypt-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            },
            new ThreadPoolExecutor.AbortPolicy());
  }

  /** A new bcrypt hash (with its own salt) of the UTF-8 bytes of {@code password}. */
  CompletionStage<String> hash(String password) {
    byte[] bytes = password.getBytes(StandardCharsets.UTF_8);
    return submit(() -> new String(hasher.hash(cost, bytes), StandardCharsets.US_ASCII));
  }

  /** Whether {@code password} is the one {@code hash} was made from. */
  CompletionStage<Boolean> matches(byte[] password, String hash) {
    byte[] stored = hash.getBytes(StandardCharsets.US_ASCII);
    return submit(() -> verifyer.verify(password, stored).verified);
  }

  /** Tasks waiting for a thread. */
  int queued() {
    return executor.getQueue().size();
  }

  private <T> CompletionStage<T> submit(Supplier<T> work) {
    Task<T> task = new Task<>(work);
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      task.result.completeExceptionally(
          new StoreException(
              StoreException.Kind.OVERLOADED,
              "password checks overloaded: " + executor.getQueue().size() + " waiting",
              e));
    }
    return task.result;
  }

  /** Stops the threads; a task still waiting fails as UNAVAILABLE. */
  @Override
  public void close() {
    for (Runnable waiting : executor.shutdownNow()) {
      if (waiting instanceof Task<?> task) {
        task.result.completeExceptionally(
            new StoreException(StoreException.Kind.UNAVAILABLE, "registry closed"));
      }
    }
  }

  private static final class Task<T> implements Runnable {
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final Supplier<T> work;

    Task(Supplier<T> work) {
      this.work = work;
    }

    @Override
    public void run() {
      try {
        result.complete(work.get());
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
      }
    }
  }
}
