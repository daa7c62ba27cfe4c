package io.fieldline.common.ota;

import java.util.Objects;

/**
 * What was uploaded into a package: the file as it was sent, its size and its checksum. Immutable:
 * a package's data is set once (ThingsBoard refuses to change it too).
 *
 * @param fileName the uploaded file's name, as the client gave it
 * @param contentType the uploaded part's media type ({@code application/octet-stream} unless given)
 * @param size bytes of data
 * @param checksumAlgorithm how {@code checksum} was computed
 * @param checksum the data's checksum in {@code checksumAlgorithm}'s text form ({@link
 *     ChecksumAlgorithm#start()})
 */
public record OtaPackageData(
    String fileName,
    String contentType,
    long size,
    ChecksumAlgorithm checksumAlgorithm,
    String checksum) {

  public OtaPackageData {
    Objects.requireNonNull(fileName, "fileName");
    Objects.requireNonNull(contentType, "contentType");
    Objects.requireNonNull(checksumAlgorithm, "checksumAlgorithm");
    Objects.requireNonNull(checksum, "checksum");
    if (size < 0) {
      throw new IllegalArgumentException("size must not be negative: " + size);
    }
  }
}
