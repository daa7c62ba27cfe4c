package io.fieldline.perf.simulations;

import com.sun.management.UnixOperatingSystemMXBean;
import io.fieldline.perf.mqtt.MqttProtocol;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of every simulation, from system properties ({@code mvn gatling:test -Dx=y} passes
 * them on to the Gatling JVM). All are validated at once; a bad value fails the run before any
 * connection is opened.
 *
 * @param host broker address ({@code host}, default 127.0.0.1)
 * @param ports broker MQTT ports: {@code ports}, a comma-separated list such as {@code 1883,1884}
 *     (the nodes of a local cluster; Gatling user {@code i} connects to {@code ports[i mod n]}), or
 *     else the single {@code port} (default 1883). Giving both is an error
 * @param devices virtual devices, one connection each ({@code devices}, default 100)
 * @param ratePerDevice messages per second per device ({@code ratePerDevice}, default 1; ignored by
 *     MaxThroughput)
 * @param duration how long each device publishes ({@code duration}, seconds, default 60)
 * @param rampConnectionsPerSec new connections per second ({@code rampConnectionsPerSec}, default
 *     500)
 * @param keys telemetry keys per message, 3 to 5 ({@code keys}, default 4)
 * @param qos 0 or 1 ({@code qos}, default 1)
 * @param feeder CSV of {@code name,id,token} written by DeviceProvisioner ({@code feeder},
 *     required)
 * @param keepAlive MQTT keep-alive ({@code keepAlive}, seconds, default 60)
 * @param ackTimeout PUBACK timeout ({@code ackTimeout}, seconds, default 10)
 * @param hold how long ConnectionStorm keeps each connection open ({@code hold}, seconds, default
 *     10)
 * @param warmup seconds after the ramp that the steady window leaves out ({@code warmup}, default
 *     30): JIT compilation, token lookups and actor restores of the ramp settle there
 * @param storm ConnectionStorm's variant ({@code storm}): {@code connect} (default: connect,
 *     publish once, hold, disconnect) or {@code reconnect} (all connect and publish at {@code
 *     ratePerDevice} for {@code hold} seconds, every socket is dropped at once without DISCONNECT,
 *     every device reconnects at once and publishes for {@code duration} seconds more)
 * @param cold ColdStart's first window ({@code cold}, seconds, default 60): reported apart from the
 *     next {@code cold} seconds (warm)
 * @param sourceAddresses loopback source addresses the devices connect from ({@code
 *     sourceAddresses}, default 0: the OS's choice, one address): device {@code i} uses address
 *     {@code i mod n}, so that a broker's per-address limits meet a fleet of many sites as in the
 *     field rather than one host opening every connection
 * @param tlsCa MQTT over TLS ({@code tlsCa}, optional): the PEM file of the CA that signed the
 *     broker's certificate; {@code port}/{@code ports} are then the broker's TLS ports. Unset:
 *     plain TCP
 * @param tlsProvider the client's TLS implementation ({@code tlsProvider}): {@code jdk} (default)
 *     or {@code openssl} (netty-tcnative, on this module's test classpath)
 * @param summary where to write the run's JSON summary ({@code summary}, optional)
 * @param ledger where to write the acknowledgement ledger ({@code ledger}, optional)
 */
public record SimulationSettings(
    String host,
    List<Integer> ports,
    int devices,
    double ratePerDevice,
    Duration duration,
    double rampConnectionsPerSec,
    int keys,
    int qos,
    Path feeder,
    int keepAlive,
    Duration ackTimeout,
    Duration hold,
    Duration warmup,
    String storm,
    Duration cold,
    int sourceAddresses,
    @Nullable Path tlsCa,
    SslProvider tlsProvider,
    @Nullable Path summary,
    @Nullable Path ledger) {

  /** File descriptors kept free for everything but device sockets (jars, logs, epoll, report). */
  static final int FD_MARGIN = 300;

  public static SimulationSettings fromSystemProperties() {
    List<String> errors = new ArrayList<>();
    String feederValue = System.getProperty("feeder", "");
    Path feeder = Path.of(feederValue.isBlank() ? "devices.csv" : feederValue);
    int awaitFeeder = intProperty("awaitFeeder", 0, 0, 3600, errors);
    if (awaitFeeder > 0) {
      awaitFile(feeder, Duration.ofSeconds(awaitFeeder));
    }
    if (!Files.isRegularFile(feeder)) {
      errors.add(
          "feeder: no such file "
              + feeder.toAbsolutePath()
              + " (run DeviceProvisioner first, pass -Dfeeder=...)");
    }
    SimulationSettings settings =
        new SimulationSettings(
            System.getProperty("host", "127.0.0.1"),
            portsProperty(errors),
            intProperty("devices", 100, 1, 1_000_000, errors),
            doubleProperty("ratePerDevice", 1.0, errors),
            Duration.ofSeconds(intProperty("duration", 60, 1, 24 * 3600, errors)),
            doubleProperty("rampConnectionsPerSec", 500, errors),
            intProperty("keys", 4, 3, 5, errors),
            intProperty("qos", 1, 0, 1, errors),
            feeder,
            intProperty("keepAlive", 60, 0, 65535, errors),
            Duration.ofSeconds(intProperty("ackTimeout", 10, 1, 3600, errors)),
            Duration.ofSeconds(intProperty("hold", 10, 0, 3600, errors)),
            Duration.ofSeconds(intProperty("warmup", 30, 0, 3600, errors)),
            stormProperty(errors),
            Duration.ofSeconds(intProperty("cold", 60, 5, 3600, errors)),
            intProperty("sourceAddresses", 0, 0, MqttProtocol.MAX_SOURCE_ADDRESSES, errors),
            pathProperty("tlsCa"),
            tlsProviderProperty(errors),
            pathProperty("summary"),
            pathProperty("ledger"));
    long maxFds = maxFileDescriptors();
    if (maxFds > 0 && settings.devices() + FD_MARGIN > maxFds) {
      errors.add(
          "devices: "
              + settings.devices()
              + " sockets need more than the "
              + maxFds
              + " open files this JVM may have (ulimit -n; keep devices <= "
              + (maxFds - FD_MARGIN)
              + ")");
    }
    if (settings.tlsCa() != null && !Files.isRegularFile(settings.tlsCa())) {
      errors.add("tlsCa: no such file " + settings.tlsCa().toAbsolutePath());
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("bad simulation settings: " + String.join("; ", errors));
    }
    return settings;
  }

  /**
   * Time over which connections are opened, in whole seconds and at least one: Gatling 3.15 injects
   * nobody at all from a {@code rampUsers(n).during(d)} with {@code d} under a second.
   */
  public Duration ramp() {
    return Duration.ofSeconds(Math.max(1, (long) Math.ceil(devices / rampConnectionsPerSec)));
  }

  /**
   * Seconds (from the first connection attempt) over which rates, CPU and steady latency are taken:
   * after the ramp and the warm-up, before the first device stops. Falls back to the whole
   * publishing time when the run is too short for a window of at least 10 s.
   */
  public int[] steadyWindow() {
    int from = (int) (ramp().toSeconds() + warmup.toSeconds());
    int to = (int) duration.toSeconds() - 1;
    if (to - from >= 10) {
      return new int[] {from, to};
    }
    int shortFrom = (int) ramp().toSeconds() + 1;
    return to > shortFrom ? new int[] {shortFrom, to} : new int[] {1, (int) duration.toSeconds()};
  }

  /** Pause between two messages of one device. */
  public Duration pace() {
    return Duration.ofNanos((long) (1_000_000_000L / ratePerDevice));
  }

  /** Settings as they go into the run's summary. */
  public Map<String, Object> describe() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("host", host);
    out.put("port", ports.get(0));
    out.put("ports", ports);
    out.put("devices", devices);
    out.put("ratePerDevice", ratePerDevice);
    out.put("durationSeconds", duration.toSeconds());
    out.put("rampConnectionsPerSec", rampConnectionsPerSec);
    out.put("rampSeconds", ramp().toSeconds());
    out.put("warmupSeconds", warmup.toSeconds());
    out.put("keys", keys);
    out.put("qos", qos);
    out.put("storm", storm);
    out.put("holdSeconds", hold.toSeconds());
    out.put("coldSeconds", cold.toSeconds());
    out.put("sourceAddresses", sourceAddresses);
    out.put("tls", tlsCa != null);
    if (tlsCa != null) {
      out.put("tlsProvider", tlsProvider.name().toLowerCase(Locale.ROOT));
    }
    return out;
  }

  private static SslProvider tlsProviderProperty(List<String> errors) {
    String value = System.getProperty("tlsProvider", "").strip();
    return switch (value) {
      case "", "jdk" -> SslProvider.JDK;
      case "openssl" -> SslProvider.OPENSSL;
      default -> {
        errors.add("tlsProvider: jdk or openssl, not " + value);
        yield SslProvider.JDK;
      }
    };
  }

  private static String stormProperty(List<String> errors) {
    String value = System.getProperty("storm", "").strip();
    if (value.isEmpty()) {
      return "connect";
    }
    if (!value.equals("connect") && !value.equals("reconnect")) {
      errors.add("storm: connect or reconnect, not " + value);
      return "connect";
    }
    return value;
  }

  /**
   * Waits until {@code file} exists or {@code timeout} has passed ({@code awaitFeeder}:
   * bench/run.sh ColdStart starts the load generator before the server is ready and renames the
   * provisioned device file into place once it is complete). Woken by file-system events on the
   * parent folder.
   */
  static boolean awaitFile(Path file, Duration timeout) {
    Path absolute = file.toAbsolutePath();
    Path folder = absolute.getParent();
    long deadline = System.nanoTime() + timeout.toNanos();
    try (WatchService watcher = folder.getFileSystem().newWatchService()) {
      folder.register(watcher, StandardWatchEventKinds.ENTRY_CREATE);
      while (!Files.isRegularFile(absolute)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        WatchKey key = watcher.poll(left, TimeUnit.NANOSECONDS);
        if (key != null) {
          key.pollEvents();
          key.reset();
        }
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Files.isRegularFile(absolute);
    }
  }

  private static List<Integer> portsProperty(List<String> errors) {
    String list = System.getProperty("ports");
    if (list == null || list.isBlank()) {
      return List.of(intProperty("port", 1883, 1, 65535, errors));
    }
    String single = System.getProperty("port");
    if (single != null && !single.isBlank()) {
      errors.add("port and ports: give one of them, not both");
    }
    return parsePorts(list, errors);
  }

  /** {@code 1883,1884}: at least one port, each 1..65535; problems go to {@code errors}. */
  static List<Integer> parsePorts(String list, List<String> errors) {
    List<Integer> ports = new ArrayList<>();
    for (String part : list.split(",", -1)) {
      try {
        int port = Integer.parseInt(part.strip());
        if (port < 1 || port > 65535) {
          errors.add("ports: " + port + " is outside 1..65535");
        } else {
          ports.add(port);
        }
      } catch (NumberFormatException e) {
        errors.add("ports: not a port number: '" + part.strip() + "' in " + list);
      }
    }
    return ports.isEmpty() ? List.of(1883) : List.copyOf(ports);
  }

  private static long maxFileDescriptors() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
  }

  static int intProperty(String name, int defaultValue, int min, int max, List<String> errors) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank()) {
      return defaultValue;
    }
    try {
      int parsed = Integer.parseInt(value.strip());
      if (parsed < min || parsed > max) {
        errors.add(name + ": " + parsed + " is outside " + min + ".." + max);
      }
      return Math.max(min, Math.min(max, parsed));
    } catch (NumberFormatException e) {
      errors.add(name + ": not an integer: " + value);
      return defaultValue;
    }
  }

  static double doubleProperty(String name, double defaultValue, List<String> errors) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank()) {
      return defaultValue;
    }
    try {
      double parsed = Double.parseDouble(value.strip());
      if (!(parsed > 0)) {
        errors.add(name + ": must be positive: " + value);
        return defaultValue;
      }
      return parsed;
    } catch (NumberFormatException e) {
      errors.add(name + ": not a number: " + value);
      return defaultValue;
    }
  }

  static @Nullable Path pathProperty(String name) {
    String value = System.getProperty(name);
    return value == null || value.isBlank() ? null : Path.of(value);
  }
}
