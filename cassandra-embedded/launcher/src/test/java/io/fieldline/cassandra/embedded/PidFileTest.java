package io.fieldline.cassandra.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PidFileTest {

  @TempDir Path tmp;

  private Process child;

  @AfterEach
  void killChild() throws InterruptedException {
    if (child != null) {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A process that waits on its stdin (never written) and shows {@code args} on its command line.
   */
  private Process startWaiting(String... args) throws IOException {
    String[] command = new String[3 + args.length];
    command[0] = "bash";
    command[1] = "-c";
    command[2] = "read line";
    System.arraycopy(args, 0, command, 3, args.length);
    return new ProcessBuilder(command).start();
  }

  @Test
  void should_kill_process_when_it_is_a_cassandra_daemon_of_this_work_dir() throws IOException {
    CassandraConfFiles files = new CassandraConfFiles(tmp);
    PidFile pidFile = new PidFile(files);
    child =
        startWaiting("-Dcassandra.config=" + files.yaml().toUri(), CassandraCommandLine.MAIN_CLASS);
    pidFile.write(child.pid());

    assertThat(pidFile.killLeftover()).isTrue();

    assertThat(child.isAlive()).isFalse();
    assertThat(files.pidFile()).doesNotExist();
  }

  @Test
  void should_leave_process_alive_when_it_is_a_cassandra_of_another_work_dir() throws IOException {
    CassandraConfFiles files = new CassandraConfFiles(tmp.resolve("mine"));
    CassandraConfFiles other = new CassandraConfFiles(tmp.resolve("other"));
    PidFile pidFile = new PidFile(files);
    child =
        startWaiting("-Dcassandra.config=" + other.yaml().toUri(), CassandraCommandLine.MAIN_CLASS);
    Files.createDirectories(tmp.resolve("mine"));
    pidFile.write(child.pid());

    assertThat(pidFile.killLeftover()).isFalse();

    assertThat(child.isAlive()).isTrue();
    assertThat(files.pidFile()).doesNotExist();
  }

  @Test
  void should_leave_process_alive_when_it_is_no_cassandra() throws IOException {
    PidFile pidFile = new PidFile(new CassandraConfFiles(tmp));
    child = startWaiting();
    pidFile.write(child.pid());

    assertThat(pidFile.killLeftover()).isFalse();

    assertThat(child.isAlive()).isTrue();
  }

  @Test
  void should_do_nothing_when_there_is_no_pid_file() {
    assertThat(new PidFile(new CassandraConfFiles(tmp)).killLeftover()).isFalse();
  }
}
