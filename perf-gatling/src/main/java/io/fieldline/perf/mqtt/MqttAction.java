package io.fieldline.perf.mqtt;

import io.gatling.commons.stats.KO$;
import io.gatling.commons.stats.OK$;
import io.gatling.commons.util.Clock;
import io.gatling.commons.validation.Failure;
import io.gatling.commons.validation.Success;
import io.gatling.commons.validation.Validation;
import io.gatling.core.action.Action;
import io.gatling.core.action.BlockExit;
import io.gatling.core.session.Session;
import io.gatling.core.stats.StatsEngine;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Function1;
import scala.Option;

/**
 * Base of the MQTT actions, in plain Java. Gatling's {@code ExitableAction}/{@code ChainableAction}
 * stack their behaviour with Scala {@code abstract override}, whose super accessors javac cannot
 * call, so this class implements {@link Action} directly and redoes what they add: leave a block
 * when the session must exit it ({@code during} time up, {@code tryMax}, {@code exitBlockOnFail}),
 * and on an unexpected exception log it and pass the user on, failed.
 *
 * <p>{@link #execute} runs on the virtual user's event loop ({@code Action.!} hops there).
 */
abstract class MqttAction implements Action {

  private static final Logger LOG = LoggerFactory.getLogger(MqttAction.class);
  private static final com.typesafe.scalalogging.Logger SCALA_LOGGER =
      com.typesafe.scalalogging.Logger$.MODULE$.apply(LOG);

  protected final String requestName;
  protected final Action next;
  protected final MqttComponents components;
  protected final StatsEngine statsEngine;
  protected final Clock clock;

  MqttAction(String requestName, Action next, MqttComponents components) {
    this.requestName = requestName;
    this.next = next;
    this.components = components;
    this.statsEngine = components.core().statsEngine();
    this.clock = components.core().clock();
  }

  @Override
  public String name() {
    return requestName;
  }

  @Override
  public com.typesafe.scalalogging.Logger logger() {
    return SCALA_LOGGER;
  }

  @Override
  public void com$typesafe$scalalogging$StrictLogging$_setter_$logger_$eq(
      com.typesafe.scalalogging.Logger logger) {
    // StrictLogging's field initializer; logger() above is the only logger.
  }

  @Override
  public final void execute(Session session) {
    Option<BlockExit> exit = BlockExit.mustExit(session);
    if (exit.isDefined()) {
      exit.get().exitBlock(statsEngine, clock.nowMillis());
      return;
    }
    try {
      send(session);
    } catch (RuntimeException e) {
      LOG.error(
          "'{}' crashed for user {}, forwarding to the next action",
          requestName,
          session.userId(),
          e);
      next.$bang(session.markAsFailed());
    }
  }

  /** Sends the request; must eventually call {@link #ok} or {@link #ko} (or pass on itself). */
  protected abstract void send(Session session);

  protected final void ok(Session session, long startMillis, long endMillis) {
    statsEngine.logResponse(
        session.scenario(),
        session.groups(),
        requestName,
        startMillis,
        endMillis,
        OK$.MODULE$,
        Option.empty(),
        Option.empty());
    next.$bang(session.logGroupRequestTimings(startMillis, endMillis));
  }

  protected final void ko(Session session, long startMillis, long endMillis, String message) {
    statsEngine.logResponse(
        session.scenario(),
        session.groups(),
        requestName,
        startMillis,
        endMillis,
        KO$.MODULE$,
        Option.empty(),
        Option.apply(message));
    next.$bang(session.logGroupRequestTimings(startMillis, endMillis).markAsFailed());
  }

  /**
   * Evaluates a Gatling expression; on failure reports the crash, passes the user on failed and
   * returns null.
   */
  protected final <T> @Nullable T resolve(
      Function1<Session, Validation<T>> expression, Session session) {
    Validation<T> value = expression.apply(session);
    if (value instanceof Success<T> success) {
      return success.value();
    }
    String message = value instanceof Failure failure ? failure.message() : String.valueOf(value);
    statsEngine.logRequestCrash(session.scenario(), session.groups(), requestName, message);
    next.$bang(session.markAsFailed());
    return null;
  }
}
