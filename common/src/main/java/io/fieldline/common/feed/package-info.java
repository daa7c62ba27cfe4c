/**
 * The change feed's ports: what the store records of every stored message ({@link FeedEntry}), the
 * logs the records live in ({@link FeedStore}), this node's own log while it is written ({@link
 * LocalFeed}), and where the export sinks, their cursors and dead letters are kept ({@link
 * SinkStore}). Storage implements them; the {@code export} module reads through them.
 */
@NullMarked
package io.fieldline.common.feed;

import org.jspecify.annotations.NullMarked;
