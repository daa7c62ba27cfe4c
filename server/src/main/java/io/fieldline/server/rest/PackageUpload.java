package io.fieldline.server.rest;

import io.fieldline.common.log.LogThrottles;
import io.fieldline.common.ota.ChecksumAlgorithm;
import io.fieldline.common.ota.OtaPackageConflictException;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.ota.RunningChecksum;
import io.fieldline.fleet.ota.OtaConfig;
import io.fieldline.fleet.ota.OtaMetrics;
import io.fieldline.fleet.ota.OtaMetrics.UploadOutcome;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upload of a package's file, streamed into storage: the bytes as they arrive (Pekko HTTP's
 * multipart parser hands them on without collecting the file) fill one storage chunk ({@link
 * OtaPackageStore#dataChunkSize()}, 64 KiB) at a time, each written before more is read, while the
 * checksum is computed over them. So one upload holds one chunk and the piece being read, never the
 * file. At the end the checksum is compared with the one given (if any) and the upload completed;
 * on any failure (checksum mismatch, file above {@code max-package-size}, storage, broken
 * connection) the chunks written are removed and nothing is kept. It is the REST upload's half that
 * reads Pekko HTTP's part stream, so it lives beside its route rather than in the fleet module.
 *
 * <p>The part's byte stream is always read to its end (within the route's size limit, {@code
 * max-package-size} plus the multipart framing), even after a failure: Pekko's {@code fileUpload}
 * fails the whole request with a 500 when the part's stream fails before the route answered.
 *
 * <p>Failures: {@link IllegalArgumentException} (bad checksum, empty file: 400), {@link
 * NoSuchElementException} (no such package: 404), {@link OtaPackageConflictException} (it has data
 * already: 409), {@link PackageTooLargeException} (413), storage errors as they come. Thread-safe;
 * each upload's state is confined to its stream.
 */
final class PackageUpload {

  private static final Logger LOG = LoggerFactory.getLogger(PackageUpload.class);

  private final OtaPackageStore store;
  private final OtaConfig config;
  private final OtaMetrics metrics;
  private final LogThrottles<UploadOutcome> refusedLogs = new LogThrottles<>(UploadOutcome.class);

  PackageUpload(OtaPackageStore store, OtaConfig config, OtaMetrics metrics) {
    this.store = store;
    this.config = config;
    this.metrics = metrics;
  }

  /** The file is larger than {@code fieldline.ota.max-package-size}. */
  static final class PackageTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PackageTooLargeException(long limit) {
      super("the file is larger than the maximum package size of " + limit + " bytes");
    }
  }

  /** The checksum given with the file is not the file's (a 400). */
  static final class ChecksumMismatchException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    ChecksumMismatchException(String message) {
      super(message);
    }
  }

  /**
   * Uploads {@code bytes} as package {@code id}'s data.
   *
   * @param checksum the checksum the client gives, verified; null to only compute it
   * @return the package with its data
   */
  CompletionStage<OtaPackageInfo> upload(
      OtaPackageId id,
      ChecksumAlgorithm algorithm,
      @Nullable String checksum,
      String fileName,
      String contentType,
      Source<ByteString, ?> bytes,
      Materializer materializer) {
    return store
        .find(id)
        .thenCompose(
            found -> {
              OtaPackageInfo info =
                  found.orElseThrow(() -> new NoSuchElementException("OTA package not found"));
              if (info.hasData()) {
                throw new OtaPackageConflictException(
                    "OTA package " + id + " already has data: it cannot be changed");
              }
              return stream(id, algorithm, checksum, fileName, contentType, bytes, materializer);
            })
        .whenComplete((info, error) -> count(id, info, error));
  }

  private CompletionStage<OtaPackageInfo> stream(
      OtaPackageId id,
      ChecksumAlgorithm algorithm,
      @Nullable String checksum,
      String fileName,
      String contentType,
      Source<ByteString, ?> bytes,
      Materializer materializer) {
    UUID uploadId = UUID.randomUUID();
    Chunker chunker = new Chunker(id, uploadId, algorithm.start());
    CompletionStage<OtaPackageInfo> done =
        bytes
            .runWith(Sink.foldAsync(chunker, Chunker::accept), materializer)
            .thenCompose(Chunker::finish)
            .thenCompose(
                total -> {
                  String computed = chunker.checksum.text();
                  if (checksum != null && !ChecksumAlgorithm.same(checksum, computed)) {
                    throw new ChecksumMismatchException(
                        "the file's "
                            + algorithm
                            + " checksum is "
                            + computed
                            + ", not the "
                            + checksum.strip()
                            + " given");
                  }
                  return store.completeUpload(
                      id,
                      uploadId,
                      new OtaPackageData(fileName, contentType, total, algorithm, computed));
                });
    // Whatever failed, the chunks of this upload go (best effort: a package's delete removes any
    // left over).
    return done.handle(
            (info, error) ->
                error == null
                    ? CompletableFuture.completedFuture(info)
                    : store
                        .abortUpload(id, uploadId)
                        .<OtaPackageInfo>handle(
                            (aborted, abortError) -> {
                              if (abortError != null) {
                                LOG.warn(
                                    "[ota|{}] chunks of a failed upload not removed: {}",
                                    id,
                                    String.valueOf(abortError));
                              }
                              throw error instanceof CompletionException e
                                  ? e
                                  : new CompletionException(error);
                            }))
        .thenCompose(Function.identity());
  }

  private void count(OtaPackageId id, @Nullable OtaPackageInfo info, @Nullable Throwable error) {
    if (error == null && info != null && info.data() != null) {
      metrics.upload(UploadOutcome.STORED, info.data().size());
      LOG.info(
          "[ota|{}] data stored: {} bytes, {} {}",
          id,
          info.data().size(),
          info.data().checksumAlgorithm(),
          info.data().checksum());
      return;
    }
    Throwable cause = unwrap(error);
    UploadOutcome outcome =
        cause instanceof PackageTooLargeException || cause instanceof EntityStreamSizeException
            ? UploadOutcome.TOO_LARGE
            : cause instanceof OtaPackageConflictException
                ? UploadOutcome.CONFLICT
                : cause instanceof ChecksumMismatchException
                    ? UploadOutcome.BAD_CHECKSUM
                    : cause instanceof IllegalArgumentException
                            || cause instanceof NoSuchElementException
                        ? UploadOutcome.BAD_REQUEST
                        : UploadOutcome.FAILED;
    metrics.upload(outcome, 0);
    // A client error (an aborted upload among them): one line per outcome at most every 10 s, no
    // stack trace, no exception text beyond its class and message. The EnumMap holds a throttle
    // for every outcome, put in the constructor.
    long skipped = Objects.requireNonNull(refusedLogs.get(outcome)).admit();
    if (skipped >= 0) {
      LOG.info(
          "[ota|{}] upload refused ({}): {} ({} similar lines left out before)",
          id,
          outcome,
          cause == null ? "-" : cause.getClass().getSimpleName(),
          skipped);
    }
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /**
   * Cuts the incoming bytes into storage chunks, writing each before taking more. It never fails
   * the stream it reads: a failed part stream fails the whole multipart request in Pekko's {@code
   * fileUpload} before this upload could answer. So once something went wrong (a write failed, the
   * file passed {@code max-package-size}) it only drains the rest, and {@link #finish} reports it.
   * Confined to the stream: the fold hands it from one element to the next.
   */
  private final class Chunker {
    private final OtaPackageId id;
    private final UUID uploadId;
    private final RunningChecksum checksum;
    private final int chunkSize = store.dataChunkSize();
    private byte[] buffer = new byte[chunkSize];
    private int filled;
    private int index;
    private long total;
    private @Nullable Throwable failure;

    Chunker(OtaPackageId id, UUID uploadId, RunningChecksum checksum) {
      this.id = id;
      this.uploadId = uploadId;
      this.checksum = checksum;
    }

    CompletionStage<Chunker> accept(ByteString piece) {
      total += piece.size();
      if (failure != null) {
        return CompletableFuture.completedFuture(this);
      }
      if (total > config.maxPackageBytes()) {
        failure = new PackageTooLargeException(config.maxPackageBytes());
        return CompletableFuture.completedFuture(this);
      }
      CompletionStage<Void> writes = CompletableFuture.completedFuture(null);
      ByteBuffer source = piece.asByteBuffer();
      while (source.hasRemaining()) {
        int take = Math.min(chunkSize - filled, source.remaining());
        source.get(buffer, filled, take);
        checksum.update(buffer, filled, take);
        filled += take;
        if (filled == chunkSize) {
          byte[] full = buffer;
          int at = index++;
          buffer = new byte[chunkSize];
          filled = 0;
          writes = writes.thenCompose(done -> store.writeChunk(id, uploadId, at, full));
        }
      }
      return writes.handle(
          (done, error) -> {
            if (error != null) {
              failure = error;
            }
            return this;
          });
    }

    /** Writes what is left; completes with the file's size, or fails with what went wrong. */
    CompletionStage<Long> finish() {
      if (failure != null) {
        return CompletableFuture.failedFuture(failure);
      }
      if (total == 0) {
        throw new IllegalArgumentException("the file is empty");
      }
      if (filled == 0) {
        return CompletableFuture.completedFuture(total);
      }
      byte[] last = Arrays.copyOf(buffer, filled);
      return store.writeChunk(id, uploadId, index, last).thenApply(done -> total);
    }
  }
}
