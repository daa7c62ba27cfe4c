package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.cql.BatchableStatement;

/**
 * A statement with the estimated size of the keys and values it writes, so that batches can be
 * bounded by bytes as well as by count.
 */
record SizedStatement(BatchableStatement<?> statement, int bytes) {}
