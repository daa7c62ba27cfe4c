package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one batch builder, without Cassandra: its settings and how it splits a message. */
class UnloggedBatchesTest {

  private final UnloggedBatches batches =
      new UnloggedBatches(DefaultConsistencyLevel.LOCAL_QUORUM, 3, 1000);

  private static List<SizedStatement> statements(int... sizes) {
    List<SizedStatement> out = new ArrayList<>();
    for (int i = 0; i < sizes.length; i++) {
      out.add(new SizedStatement(SimpleStatement.newInstance("INSERT " + i), sizes[i]));
    }
    return out;
  }

  private static List<Integer> sizes(List<BatchStatement> split) {
    List<Integer> out = new ArrayList<>();
    split.forEach(batch -> out.add(batch.size()));
    return out;
  }

  @Test
  void should_make_unlogged_idempotent_batches_at_the_write_consistency_when_started() {
    BatchStatement batch = batches.start().build();

    assertThat(batch.getBatchType()).isEqualTo(BatchType.UNLOGGED);
    assertThat(batch.isIdempotent()).isTrue();
    assertThat(batch.getConsistencyLevel()).isEqualTo(DefaultConsistencyLevel.LOCAL_QUORUM);
  }

  @Test
  void should_keep_a_message_in_one_batch_when_it_fits() {
    List<BatchStatement> split = batches.split(statements(100, 100, 100));

    assertThat(sizes(split)).containsExactly(3);
    assertThat(split.get(0).isIdempotent()).isTrue();
  }

  @Test
  void should_start_a_new_batch_when_the_statement_count_is_reached() {
    assertThat(sizes(batches.split(statements(10, 10, 10, 10, 10, 10, 10))))
        .containsExactly(3, 3, 1);
  }

  @Test
  void should_start_a_new_batch_when_the_byte_budget_would_be_exceeded() {
    assertThat(sizes(batches.split(statements(400, 400, 400, 100)))).containsExactly(2, 2);
  }

  @Test
  void should_send_a_statement_alone_when_it_is_bigger_than_the_byte_budget() {
    assertThat(sizes(batches.split(statements(100, 5000, 100)))).containsExactly(1, 1, 1);
  }
}
