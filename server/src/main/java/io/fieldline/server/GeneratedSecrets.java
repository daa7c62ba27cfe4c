package io.fieldline.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Secrets that an operator did not configure are generated once and kept in the data directory
 * (owner-only permissions), so a restart keeps the same admin password and signing key. Called at
 * start-up only (blocking file I/O).
 */
final class GeneratedSecrets {

  private static final SecureRandom RANDOM = new SecureRandom();

  private GeneratedSecrets() {}

  /** The configured value, or the one stored in {@code dataDir/fileName}, created if missing. */
  static String resolve(String configured, Path dataDir, String fileName, int randomBytes) {
    if (!configured.isEmpty()) {
      return configured;
    }
    Path file = dataDir.resolve(fileName);
    try {
      Files.createDirectories(dataDir);
      if (Files.exists(file)) {
        return Files.readString(file, StandardCharsets.UTF_8).trim();
      }
      byte[] bytes = new byte[randomBytes];
      RANDOM.nextBytes(bytes);
      String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
      try {
        Files.createFile(
            file,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      } catch (FileAlreadyExistsException raced) {
        return Files.readString(file, StandardCharsets.UTF_8).trim();
      } catch (UnsupportedOperationException notPosix) {
        Files.createFile(file);
      }
      Files.writeString(file, secret, StandardCharsets.UTF_8);
      return secret;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read or create " + file, e);
    }
  }
}
