package io.fieldline.transport.http;

import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One device's server-side RPC requests on this node, for its RPC long polls: the one listener of
 * the device's events that hands each {@code RpcRequested} to a waiting poll, from the device's
 * first RPC poll until it has had none for {@link LongPolls#ANNOUNCE_INTERVAL}. It remembers
 * whether a request was offered that no poll took (none waited, or none could take it), which is
 * what tells the device's next poll whether it must announce itself ({@code RpcSubscribed}) for the
 * RPC service to offer waiting requests again: a device that polls back to back without missing
 * anything is announced once per interval, not at every poll (each announcement costs a storage
 * read on the device's owner node).
 *
 * <p>Thread-safe: guarded by itself. Polls are handed requests under the lock, so that a poll
 * registering and a request being offered never miss each other.
 */
final class RpcWatch implements DeviceEventListener {

  /** What {@link #add} did. */
  enum Added {
    /** The watch is closed: take a new one. */
    CLOSED,
    /** The poll hears the device's requests; nothing to announce. */
    LISTENING,
    /** The poll hears the device's requests and must announce itself. */
    ANNOUNCE
  }

  private final List<LongPoll> polls = new ArrayList<>();
  private DeviceEvents.@Nullable Subscription subscription;
  private boolean announced;
  private long lastAnnounced;
  private boolean missed;
  private long idleSince;
  private boolean closed;

  /** Starts listening to the device's events. */
  synchronized void listen(DeviceEvents.Subscription subscription) {
    if (closed) {
      subscription.close();
    } else {
      this.subscription = subscription;
    }
  }

  /**
   * Registers a poll for the device's requests.
   *
   * @param now the nano clock's time
   * @param interval how long an announcement holds when nothing was missed since
   */
  synchronized Added add(LongPoll poll, long now, long interval) {
    if (closed) {
      return Added.CLOSED;
    }
    polls.add(poll);
    if (announced && !missed && now - lastAnnounced < interval) {
      return Added.LISTENING;
    }
    announced = true;
    lastAnnounced = now;
    missed = false;
    return Added.ANNOUNCE;
  }

  /** The poll ended; returns true when no poll of the device is left waiting. */
  synchronized boolean remove(LongPoll poll, long now) {
    polls.remove(poll);
    if (polls.isEmpty()) {
      idleSince = now;
      return true;
    }
    return false;
  }

  /** Closes the watch if no poll waits and (unless {@code force}) none has for {@code interval}. */
  synchronized boolean closeIfQuiet(long now, long interval, boolean force) {
    if (closed) {
      return true;
    }
    if (!polls.isEmpty() || (!force && now - idleSince < interval)) {
      return false;
    }
    close();
    return true;
  }

  /** Stops listening; polls still registered hear nothing more. */
  synchronized void close() {
    closed = true;
    polls.clear();
    if (subscription != null) {
      subscription.close();
      subscription = null;
    }
  }

  @Override
  public synchronized boolean onEvent(DeviceEvent event) {
    if (!(event instanceof RpcRequested) || closed) {
      return false;
    }
    // A copy: a poll that takes the request ends, and its clean-up removes it from the list.
    for (LongPoll poll : List.copyOf(polls)) {
      if (poll.onEvent(event)) {
        return true;
      }
    }
    missed = true;
    return false;
  }
}
