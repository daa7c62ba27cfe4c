/**
 * Driver plumbing shared by the stores: translating driver errors into {@link
 * io.fieldline.common.StoreException} once, rate-limited failure logging, collecting paged results
 * asynchronously, and mapping typed values to and from the {@code *_v} columns. Not for other
 * modules.
 */
@NullMarked
package io.fieldline.dao.cassandra.internal.cql;

import org.jspecify.annotations.NullMarked;
