package io.fieldline.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code ./fieldline start}: starts the server in the foreground; Ctrl-C / SIGTERM stops it. */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  private Main() {}

  public static void main(String[] args) throws InterruptedException {
    Config config = ConfigFactory.load();
    FieldlineServer server;
    try {
      server = FieldlineServer.start(config);
    } catch (RuntimeException e) {
      LOG.error("Fieldline failed to start: {}", e.getMessage(), e);
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                },
                "fieldline-shutdown"));
    System.out.println(Banner.render(server));
    stopped.await();
  }
}
