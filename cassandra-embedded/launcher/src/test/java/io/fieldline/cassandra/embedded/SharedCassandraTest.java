package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedCassandraTest {

  @TempDir Path tmp;

  private Process node;

  @AfterEach
  void killNode() throws InterruptedException {
    if (node != null) {
      node.destroyForcibly();
      node.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** A stand-in for a Cassandra child: waits on stdin, with the work dir's daemon arguments. */
  private Process startFakeNode(CassandraConfFiles files) throws IOException {
    Process process =
        new ProcessBuilder(
                "bash",
                "-c",
                "read line",
                "-Dcassandra.config=" + files.yaml().toUri(),
                CassandraCommandLine.MAIN_CLASS)
            .start();
    new PidFile(files).write(process.pid());
    return process;
  }

  private static long deadPid() throws IOException, InterruptedException {
    Process process = new ProcessBuilder("true").start();
    process.waitFor(10, TimeUnit.SECONDS);
    return process.pid();
  }

  @Test
  void should_kill_node_and_delete_work_dir_when_owner_jvm_is_dead() throws Exception {
    Path orphan = Files.createDirectories(tmp.resolve(SharedCassandra.WORK_DIR_PREFIX + deadPid()));
    node = startFakeNode(new CassandraConfFiles(orphan));

    SharedCassandra.cleanUpOrphans(tmp);

    assertThat(node.isAlive()).isFalse();
    assertThat(orphan).doesNotExist();
  }

  @Test
  void should_leave_work_dir_alone_when_owner_jvm_is_alive() throws IOException {
    Path live =
        Files.createDirectories(
            tmp.resolve(SharedCassandra.WORK_DIR_PREFIX + ProcessHandle.current().pid()));
    node = startFakeNode(new CassandraConfFiles(live));

    SharedCassandra.cleanUpOrphans(tmp);

    assertThat(node.isAlive()).isTrue();
    assertThat(live.resolve("cassandra.pid")).exists();
  }

  @Test
  void should_ignore_directories_when_name_has_no_pid() throws IOException {
    Path other = Files.createDirectories(tmp.resolve(SharedCassandra.WORK_DIR_PREFIX + "notes"));

    SharedCassandra.cleanUpOrphans(tmp);

    assertThat(other).exists();
  }
}
