package io.fieldline.server;

import io.fieldline.cluster.ClusterConfig;
import io.fieldline.common.feed.DeviceMoves;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.export.ExportAdmin;
import io.fieldline.export.ExportConfig;
import io.fieldline.export.Exporter;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.sink.SinkFactory;
import io.fieldline.export.sink.kafka.KafkaSinkFactory;
import io.fieldline.export.sink.webhook.WebhookSinkFactory;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.Predicate;

/**
 * Export (docs/export.md): this node's {@link Exporter} over the storage's feed, and the {@link
 * SinkAdmin} REST serves. Built after the cluster tier (which says which devices moved) and before
 * the transports, so it stops after they drained, with the last cursors saved.
 *
 * @param exporter this node's deliveries
 * @param admin sink management for REST and the console
 */
record ExportTier(Exporter exporter, SinkAdmin admin) {

  static ExportTier start(
      ExportConfig config,
      CassandraStorage storage,
      ClusterConfig cluster,
      DeviceMoves moves,
      MeterRegistry metrics,
      StopSteps stops) {
    String node = storage.feedNode();
    // A single node is the only writer: every other log is a previous run of it, taken at once.
    // In a cluster, a node takes at once only its own id's earlier logs; others' wait for their
    // lease to run out.
    Predicate<FeedLog> adoptAtOnce =
        cluster.enabled() ? log -> log.node().equals(node) : log -> true;
    List<SinkFactory> factories = List.of(new KafkaSinkFactory(), new WebhookSinkFactory());
    Exporter exporter =
        new Exporter(
            config,
            storage.feedStore(),
            storage.sinkStore(),
            storage.localFeed().orElse(null),
            storage.deviceRegistry()::findById,
            factories,
            metrics,
            node,
            adoptAtOnce,
            moves);
    exporter.start();
    stops.add("export", exporter::close);
    return new ExportTier(
        exporter, new ExportAdmin(storage.sinkStore(), storage.feedStore(), exporter));
  }
}
