package io.fieldline.actors;

import io.fieldline.common.kv.Ack;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The writes of one {@link Device}: at most {@code max-inflight-writes} in flight, then up to
 * {@code stash-capacity} messages waiting in arrival order (the bounded in-flight count of Pekko's
 * {@code CustomerRepository} sample, with a queue instead of an immediate rejection). Confined to
 * its device actor.
 */
final class WriteBacklog {

  private final int maxInFlight;
  private final int capacity;
  // Acknowledgements of the writes in flight; futures compare by identity.
  private final Set<CompletableFuture<Ack>> inFlight = new HashSet<>();
  private final ArrayDeque<Device.RecordMessage> waiting = new ArrayDeque<>();

  WriteBacklog(int maxInFlight, int capacity) {
    this.maxInFlight = maxInFlight;
    this.capacity = capacity;
  }

  /** Whether a new message may be written now: a slot is free and nothing waits ahead of it. */
  boolean canStart() {
    return inFlight.size() < maxInFlight && waiting.isEmpty();
  }

  /** Queues a message behind the writes in flight; false when the queue is full. */
  boolean offer(Device.RecordMessage message) {
    if (waiting.size() >= capacity) {
      return false;
    }
    waiting.add(message);
    return true;
  }

  void started(CompletableFuture<Ack> ack) {
    inFlight.add(ack);
  }

  /** Frees the write's slot; a write this backlog did not start (before a restart) has none. */
  void finished(CompletableFuture<Ack> ack) {
    inFlight.remove(ack);
  }

  /**
   * The next waiting message that may be written now, or null. Messages whose acknowledgement
   * already completed (timed out while waiting) are dropped: the device resends them anyway.
   */
  Device.@Nullable RecordMessage next() {
    while (inFlight.size() < maxInFlight && !waiting.isEmpty()) {
      Device.RecordMessage message = waiting.poll();
      if (!message.ack().isDone()) {
        return message;
      }
    }
    return null;
  }

  int inFlight() {
    return inFlight.size();
  }

  boolean isEmpty() {
    return inFlight.isEmpty() && waiting.isEmpty();
  }

  /** Forgets every waiting message and returns their acknowledgements. */
  List<CompletableFuture<Ack>> clearWaiting() {
    List<CompletableFuture<Ack>> acks = new ArrayList<>(waiting.size());
    waiting.forEach(message -> acks.add(message.ack()));
    waiting.clear();
    return acks;
  }

  /** Forgets every write in flight and returns their acknowledgements. */
  List<CompletableFuture<Ack>> clearInFlight() {
    List<CompletableFuture<Ack>> acks = new ArrayList<>(inFlight);
    inFlight.clear();
    return acks;
  }
}
