package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The warm-up writes through the real message path before the listener opens, under reserved device
 * ids that no device row names, and rewrites the same cells at every start.
 */
class WarmUpIT extends ServerTestBase {

  private static final int MESSAGES = 2_000;
  // Message i goes to reserved device i mod 16 at ts 1 + i mod 1000: 2,000 messages give each
  // device 125 distinct timestamps, each with 4 keys.
  private static final long CELLS = WarmUp.DEVICES * 125L * 4;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("fieldline.warm-up.messages", MESSAGES);
  }

  private long warmUpRows() {
    long rows = 0;
    for (int i = 0; i < WarmUp.DEVICES; i++) {
      rows += rows(WarmUp.device(i));
    }
    return rows;
  }

  @Test
  void should_store_the_warm_up_under_reserved_ids_and_rewrite_the_same_cells_on_restart()
      throws Exception {
    assertThat(warmUpRows()).isEqualTo(CELLS);
    for (int i = 0; i < WarmUp.DEVICES; i++) {
      assertThat(server.registry().findById(WarmUp.device(i)).toCompletableFuture().join())
          .as("no device row names a reserved id")
          .isEmpty();
    }

    server.close();
    server = FieldlineServer.start(config(Files.createTempDirectory("fieldline-it-")));

    // The new server wrote every value again before it opened, into the same cells.
    assertThat(metric("fieldline_store_rows_written_total")).isGreaterThanOrEqualTo(MESSAGES * 4);
    assertThat(warmUpRows()).as("the same cells, not more").isEqualTo(CELLS);
  }
}
