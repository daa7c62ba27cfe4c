package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** docs/configuration.md must list every environment variable the reference.conf files define. */
class ConfigDocumentationTest {

  private static final Pattern ENV = Pattern.compile("#\\s*Env:\\s*(FIELDLINE_[A-Z0-9_]+)");

  @Test
  void should_document_every_environment_variable_when_a_key_is_added() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent();
    String doc = Files.readString(root.resolve("docs/configuration.md"));
    List<Path> confs;
    try (Stream<Path> modules = Files.list(root)) {
      confs =
          modules
              .map(module -> module.resolve("src/main/resources/reference.conf"))
              .filter(Files::exists)
              .toList();
    }
    assertThat(confs).hasSizeGreaterThanOrEqualTo(4);
    for (Path conf : confs) {
      Matcher matcher = ENV.matcher(Files.readString(conf));
      while (matcher.find()) {
        assertThat(doc)
            .as("%s documents %s; rerun scripts/gen-configuration-doc.py", conf, matcher.group(1))
            .contains("`" + matcher.group(1) + "`");
      }
    }
  }
}
