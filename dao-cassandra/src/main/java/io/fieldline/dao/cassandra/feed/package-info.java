/**
 * The change feed in Cassandra: {@link io.fieldline.dao.cassandra.feed.FeedWriter} gives every
 * stored message a feed row written in the same batch as its data (so an acknowledged message is in
 * the feed), {@link io.fieldline.dao.cassandra.feed.CassandraFeedStore} reads logs back and keeps
 * leases and cursors, {@link io.fieldline.dao.cassandra.feed.CassandraSinkStore} the sinks.
 */
@NullMarked
package io.fieldline.dao.cassandra.feed;

import org.jspecify.annotations.NullMarked;
