package io.fieldline.server.fuzz;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The Jazzer settings of the fuzz campaign, as system properties, each only if the caller did not
 * set it (so {@code -Djazzer.max_duration=40m} or {@code JAZZER_FUZZ=0} on the command line wins).
 * Applied before Jazzer's JUnit extension first reads them, i.e. in {@code @BeforeAll}.
 */
final class JazzerSettings {

  /** Where each run's Jazzer directories go: under Maven's target. */
  private static final Path OUTPUT = Path.of("target", "jazzer").toAbsolutePath();

  private static final List<String> UNUSED_DETECTORS =
      Stream.of(
              "BigDecimal",
              "ClojureLangHooks",
              "Deserialization",
              "ExpressionLanguageInjection",
              "FilePathTraversal",
              "LdapInjection",
              "NamingContextLookup",
              "OsCommandInjection",
              "ReflectiveCall",
              "RegexInjection",
              "RegexRoadblocks",
              "ScriptEngineInjection",
              "SqlInjection",
              "TemplateInjection",
              "UnsafeSanitizer",
              "XPathInjection",
              "XmlParserSsrfGuidance")
          .map(name -> "com.code_intelligence.jazzer.sanitizers." + name)
          .toList();

  private JazzerSettings() {}

  static void applyDefaults() throws IOException {
    // Jazzer fuzzes when JAZZER_FUZZ is set and only replays its inputs directory otherwise; the
    // short run of `mvn verify` is a fuzzing run. JAZZER_FUZZ=0 replays the inputs only.
    if (System.getenv("JAZZER_FUZZ") == null) {
      setIfAbsent("JAZZER_FUZZ", "1");
    }
    // Coverage from the MQTT path only: Netty's MQTT codec, the transport and the payload parser
    // (in common). Not the fuzz test itself, whose choices are not the target.
    setIfAbsent("jazzer.instrument", "io.netty.handler.codec.mqtt.**,io.fieldline.transport.**");
    // Of Jazzer's bug detectors only the SSRF one has something to watch here (every connection
    // must go to 127.0.0.1); the MQTT path runs no SQL, LDAP, XPath, EL, scripts, regexes, file
    // paths, reflection or deserialization on device input. The others hook JDK classes the whole
    // server uses, and slowed start-up and every execution (docs/fuzzing.md).
    setIfAbsent("jazzer.disabled_hooks", String.join(",", UNUSED_DETECTORS));
    // Jazzer's working directories default to the module's directory (.cifuzz-corpus, and findings
    // into src/test/resources): a directory of this run's under target instead. A fresh one, so
    // that the short run starts from the inputs directory (replaying a corpus grown by earlier
    // runs would eat its time); bench/fuzz.sh names its own.
    if (System.getProperty("jazzer.internal.basedir") == null) {
      Files.createDirectories(OUTPUT);
      Path run = Files.createTempDirectory(OUTPUT, "run-");
      System.setProperty("jazzer.internal.basedir", run.toString());
    }
    Path base = Path.of(System.getProperty("jazzer.internal.basedir"));
    setIfAbsent("jazzer.reproducer_path", base.resolve("reproducers").toString());
  }

  /** Whether this run fuzzes (true) or only replays the inputs directory (false). */
  static boolean fuzzing() {
    String env = System.getenv("JAZZER_FUZZ");
    String value = env != null ? env : System.getProperty("JAZZER_FUZZ", "");
    return value.equals("1") || value.equalsIgnoreCase("true") || value.equalsIgnoreCase("yes");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }
}
