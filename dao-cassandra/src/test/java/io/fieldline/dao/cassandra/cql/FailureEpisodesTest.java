package io.fieldline.dao.cassandra.cql;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.StoreException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.helpers.NOPLogger;

class FailureEpisodesTest {

  private final AtomicLong now = new AtomicLong();
  private final FailureEpisodes episodes =
      new FailureEpisodes(NOPLogger.NOP_LOGGER, "[cql] test", 100, now::get);
  private final StoreException timeout = new StoreException(StoreException.Kind.TIMEOUT, "slow");

  @Test
  void should_start_an_episode_on_the_first_failure_and_end_it_on_success() {
    assertThat(episodes.isFailing()).isFalse();

    episodes.onFailure(timeout);
    episodes.onFailure(timeout);
    assertThat(episodes.isFailing()).isTrue();

    episodes.onSuccess();
    assertThat(episodes.isFailing()).isFalse();
  }

  @Test
  void should_stay_quiet_when_successes_follow_successes() {
    episodes.onSuccess();
    episodes.onSuccess();

    assertThat(episodes.isFailing()).isFalse();
  }
}
