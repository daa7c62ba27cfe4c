package io.fieldline.server;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * ThingsBoard's Python SDK ({@code tb-mqtt-client} from PyPI, pinned at the version its issue was
 * reported with) in a virtual environment under {@code target/}, shared by the ITs that run the SDK
 * unmodified ({@code ThingsBoardPythonSdkIT}, {@code GatewaySdkIT}, {@code
 * ThingsBoardSdkFirmwareIT}).
 *
 * <p>Failsafe runs the module's ITs in two JVMs, and two of these classes may start side by side:
 * the environment is created and installed under a file lock that both JVMs take, so one of them
 * installs while the other waits, then finds it installed. Each JVM checks it once.
 */
public final class ThingsBoardSdk {

  // The version the issue was reported with.
  private static final String SDK = "tb-mqtt-client==1.13.14";

  private static final Path VENV = Path.of("target", "thingsboard-sdk-venv").toAbsolutePath();
  private static final Path LOCK = Path.of("target", "thingsboard-sdk-venv.lock").toAbsolutePath();

  private static boolean installed;

  private ThingsBoardSdk() {}

  /** The environment's {@code python}, with the SDK installed; creates and installs if needed. */
  public static synchronized Path python() throws IOException, InterruptedException {
    Path python = VENV.resolve("bin").resolve("python");
    if (installed) {
      return python;
    }
    try (FileChannel channel =
        FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      // Waits while the other JVM holds it; released when the channel closes.
      FileLock lock = channel.lock();
      if (!Files.isExecutable(python)) {
        check(run(List.of("python3", "-m", "venv", VENV.toString()), 120));
      }
      // pip answers "already satisfied" at once when the other JVM installed it.
      check(run(List.of(python.toString(), "-m", "pip", "install", "--quiet", SDK), 300));
      lock.release();
    }
    installed = true;
    return python;
  }

  private static void check(String failure) {
    if (!failure.isEmpty()) {
      throw new IllegalStateException(failure);
    }
  }

  /** Runs a command to its end: an empty string, or what went wrong with its output. */
  private static String run(List<String> command, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("thingsboard-sdk", ".log");
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return "timed out: " + command + "\n" + Files.readString(log, StandardCharsets.UTF_8);
      }
      return process.exitValue() == 0
          ? ""
          : "exit "
              + process.exitValue()
              + ": "
              + command
              + "\n"
              + Files.readString(log, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
