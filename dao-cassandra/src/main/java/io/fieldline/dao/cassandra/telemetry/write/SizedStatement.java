package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.cql.BatchableStatement;
import java.util.List;

/**
 * A statement with the estimated size of the keys and values it writes, so that batches can be
 * bounded by bytes as well as by count.
 */
record SizedStatement(BatchableStatement<?> statement, int bytes) {

  /** The estimated size of all of them. */
  static int bytes(List<SizedStatement> statements) {
    int total = 0;
    for (SizedStatement statement : statements) {
      total += statement.bytes();
    }
    return total;
  }
}
