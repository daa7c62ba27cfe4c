package io.fieldline.cassandra.embedded;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The end of a log file, starting no earlier than where it was when the current launch began (the
 * logs are appended to across restarts). Used for failure messages only.
 */
final class LogTail {

  private static final int MAX_BYTES = 64 * 1024;

  private final Path file;
  private final long startOffset;

  private LogTail(Path file, long startOffset) {
    this.file = file;
    this.startOffset = startOffset;
  }

  /** Marks the current end of {@code file} (0 if it does not exist yet). */
  static LogTail from(Path file) {
    long size;
    try {
      size = Files.exists(file) ? Files.size(file) : 0;
    } catch (IOException e) {
      size = 0;
    }
    return new LogTail(file, size);
  }

  /** At most the last {@code maxLines} lines written since the mark, or a note why none. */
  String lastLines(int maxLines) {
    if (!Files.exists(file)) {
      return "(" + file + " does not exist)";
    }
    try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
      long end = in.length();
      // A rotated log is shorter than the mark: then read its end.
      long from = end < startOffset ? 0 : startOffset;
      from = Math.max(from, end - MAX_BYTES);
      byte[] bytes = new byte[(int) (end - from)];
      in.seek(from);
      in.readFully(bytes);
      List<String> lines = Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\n"));
      if (bytes.length == 0) {
        return "(" + file + ": nothing written)";
      }
      return String.join("\n", lines.subList(Math.max(0, lines.size() - maxLines), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + file + ": " + e + ")";
    }
  }

  /** A block for an exception message: a header naming the file, then its last lines. */
  String section(int maxLines) {
    return "\n--- " + file + " (last lines) ---\n" + lastLines(maxLines);
  }
}
