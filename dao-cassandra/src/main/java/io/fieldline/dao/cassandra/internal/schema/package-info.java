/**
 * The Cassandra schema as numbered migrations, and the migrator that applies the missing ones at
 * startup and records them in {@code schema_version}. Not for other modules.
 */
@NullMarked
package io.fieldline.dao.cassandra.internal.schema;

import org.jspecify.annotations.NullMarked;
