package io.fieldline.server.rest;

import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkView;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The sink management of a server that runs no export: every call fails with {@link
 * ExportNotConfiguredException}, which {@code /api/fieldline/sinks} answers with 503 {@code "export
 * is not configured on this server"} (docs/rest-api.md). What the composition root hands to {@link
 * RestApi} until the export module is wired in. Stateless.
 */
public final class UnconfiguredSinkAdmin implements SinkAdmin {

  /** Why every call of an {@link UnconfiguredSinkAdmin} fails; answered 503. */
  public static final class ExportNotConfiguredException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ExportNotConfiguredException() {
      super("export is not configured on this server");
    }
  }

  public UnconfiguredSinkAdmin() {}

  private static <T> CompletionStage<T> refused() {
    return CompletableFuture.failedFuture(new ExportNotConfiguredException());
  }

  @Override
  public CompletionStage<SinkView> create(SinkDraft draft) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<SinkView>> get(UUID id) {
    return refused();
  }

  @Override
  public CompletionStage<List<SinkView>> list() {
    return refused();
  }

  @Override
  public CompletionStage<Optional<SinkView>> update(UUID id, SinkDraft draft) {
    return refused();
  }

  @Override
  public CompletionStage<Boolean> delete(UUID id) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<SinkView>> pause(UUID id) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<SinkView>> resume(UUID id) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<SinkView>> replay(UUID id, long fromTs) {
    return refused();
  }

  @Override
  public CompletionStage<Optional<List<SinkDeadLetter>>> deadLetters(UUID id, int limit) {
    return refused();
  }
}
