package io.fieldline.dao.cassandra.cql;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.servererrors.DefaultWriteType;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import io.fieldline.common.StoreException;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class StoreErrorsTest {

  @Test
  void should_map_to_timeout_when_cassandra_or_the_driver_timed_out() {
    assertThat(
            kind(
                new WriteTimeoutException(
                    null, DefaultConsistencyLevel.ONE, 0, 1, DefaultWriteType.UNLOGGED_BATCH)))
        .isEqualTo(StoreException.Kind.TIMEOUT);
    assertThat(kind(new ReadTimeoutException(null, DefaultConsistencyLevel.ONE, 0, 1, false)))
        .isEqualTo(StoreException.Kind.TIMEOUT);
    assertThat(kind(new DriverTimeoutException("Query timed out after PT5S")))
        .isEqualTo(StoreException.Kind.TIMEOUT);
  }

  @Test
  void should_map_to_unavailable_when_no_replica_or_node_can_be_reached() {
    assertThat(kind(new NoNodeAvailableException())).isEqualTo(StoreException.Kind.UNAVAILABLE);
    assertThat(kind(AllNodesFailedException.fromErrors(List.of())))
        .isEqualTo(StoreException.Kind.UNAVAILABLE);
    assertThat(kind(new UnavailableException(null, DefaultConsistencyLevel.LOCAL_QUORUM, 2, 1)))
        .isEqualTo(StoreException.Kind.UNAVAILABLE);
    assertThat(kind(new IllegalStateException("Session is closed")))
        .isEqualTo(StoreException.Kind.UNAVAILABLE);
  }

  @Test
  void should_map_to_failed_when_the_error_is_anything_else() {
    assertThat(kind(new InvalidQueryException(null, "unconfigured table ts_kv")))
        .isEqualTo(StoreException.Kind.FAILED);
    assertThat(kind(new IllegalStateException("other"))).isEqualTo(StoreException.Kind.FAILED);
  }

  @Test
  void should_unwrap_completion_exceptions_and_keep_the_driver_cause_when_translating() {
    DriverTimeoutException cause = new DriverTimeoutException("late");

    StoreException translated = StoreErrors.translate(new CompletionException(cause));

    assertThat(translated.kind()).isEqualTo(StoreException.Kind.TIMEOUT);
    assertThat(translated).hasCause(cause);
  }

  @Test
  void should_return_the_same_exception_when_it_is_already_a_store_exception() {
    StoreException overloaded = new StoreException(StoreException.Kind.OVERLOADED, "full");

    assertThat(StoreErrors.translate(new CompletionException(overloaded))).isSameAs(overloaded);
  }

  private static StoreException.Kind kind(Throwable driverError) {
    return StoreErrors.translate(driverError).kind();
  }
}
