package io.newtricks.hadoop.supervise;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/**
 * A co-process runs in a private, empty directory of its own (issue 25 item 6), never in the
 * daemon's working directory, so a relative path it is handed cannot reach the daemon's files.
 */
public class WorkDirTest {
  private static File tempDir() throws IOException {
    File d = Files.createTempDirectory(new File("/tmp").toPath(), "ntcwd").toFile();
    d.deleteOnExit();
    return d;
  }

  @Test
  public void childRunsInItsOwnPrivateEmptyDirectory() throws Exception {
    File base = tempDir();
    File out = new File(base, "seen");
    // The "co-process": records where it runs (physically, and as $PWD says), what is in
    // there and whether a relative path reaches the daemon's directory, then exits.
    File bin = new File(base, "fake-ext");
    Files.write(bin.toPath(), ("#!/bin/sh\n"
        + "{ pwd -P; echo \"$PWD\"; ls -A | wc -l; test -e pom.xml && echo reaches || echo isolated; }"
        + " > " + out.getPath() + ".tmp && mv " + out.getPath() + ".tmp " + out.getPath() + "\n"
        + "exit 3\n").getBytes(StandardCharsets.UTF_8));
    assertTrue(bin.setExecutable(true, true));
    // The daemon's cwd when tests run is hadoop-patches/, where pom.xml is.
    File daemonCwd = new File(System.getProperty("user.dir")).getCanonicalFile();
    assertTrue("test runs in hadoop-patches/", new File(daemonCwd, "pom.xml").isFile());

    Configuration conf = new Configuration(false);
    conf.set(HookConf.DATANODE_BINARY, bin.getPath());
    File sock = new File(base, "sock");
    conf.set(HookConf.SOCKET_DIR, sock.getPath());
    conf.set(HookConf.LOG_DIR, base.getPath());
    conf.setLong(HookConf.BACKOFF_INITIAL_MS, 60_000); // one launch is enough
    HookConf hc = new HookConf(conf, HookConf.DATANODE_BINARY);
    CoprocessSupervisor s = new CoprocessSupervisor("datanode", "dn", "unix:///none",
        Collections.emptyMap(), hc, new HookMetrics("test-workdir"));
    CountDownLatch failed = new CountDownLatch(1);
    s.backoffListener = w -> failed.countDown();
    File expected = CoprocessSupervisor.workDir(sock, "datanode", ProcessHandle.current().pid());
    assertEquals(expected, s.workDir());
    s.start();
    try {
      assertTrue("the child ran and exited", failed.await(20, TimeUnit.SECONDS));
      long deadline = System.currentTimeMillis() + 10_000;
      while (!out.isFile() && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      List<String> seen = Files.readAllLines(out.toPath(), StandardCharsets.UTF_8);
      assertEquals(seen.toString(), 4, seen.size());
      File cwd = new File(seen.get(0));
      assertEquals(expected.getCanonicalFile(), cwd);
      assertNotEquals(daemonCwd, cwd);
      assertEquals("$PWD names the child's directory", expected.getPath(), seen.get(1));
      assertEquals("the directory was empty", "0", seen.get(2).trim());
      assertEquals("a relative path does not reach the daemon's directory", "isolated",
          seen.get(3));
      assertEquals("rwx------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(expected.toPath())));
      assertEquals(System.getProperty("user.name"),
          Files.getOwner(expected.toPath()).getName());
    } finally {
      s.stop();
    }
    assertFalse("an empty working directory is removed on stop", expected.exists());
  }

  @Test
  public void aWorkDirOthersCanEnterIsRefused() throws Exception {
    File base = tempDir();
    File bin = new File(base, "fake-ext");
    Files.write(bin.toPath(), "#!/bin/sh\nexit 0\n".getBytes(StandardCharsets.UTF_8));
    assertTrue(bin.setExecutable(true, true));
    File sock = new File(base, "sock");
    CoprocessSupervisor.ensureDir(sock);
    File wd = CoprocessSupervisor.workDir(sock, "namenode", ProcessHandle.current().pid());
    Files.createDirectory(wd.toPath());
    Files.setPosixFilePermissions(wd.toPath(), PosixFilePermissions.fromString("rwxr-xr-x"));
    Configuration conf = new Configuration(false);
    conf.set(HookConf.NAMENODE_BINARY, bin.getPath());
    conf.set(HookConf.SOCKET_DIR, sock.getPath());
    conf.set(HookConf.LOG_DIR, base.getPath());
    conf.setLong(HookConf.BACKOFF_INITIAL_MS, 60_000);
    HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    HookMetrics m = new HookMetrics("test-workdir-open");
    CoprocessSupervisor s = new CoprocessSupervisor("namenode", "nn", "unix:///none",
        Collections.emptyMap(), hc, m);
    CountDownLatch failed = new CountDownLatch(1);
    s.backoffListener = w -> failed.countDown();
    s.start();
    try {
      assertTrue(failed.await(20, TimeUnit.SECONDS));
      assertEquals("not launched", 1, m.coprocessStartFailures.value());
      File logFile = new File(base, "newtricks-namenode-ext.log");
      String log = logFile.isFile()
          ? new String(Files.readAllBytes(logFile.toPath()), StandardCharsets.UTF_8) : "";
      if (log.contains("starting")) {
        fail("the child was started in a directory others can enter: " + log);
      }
    } finally {
      s.stop();
    }
  }

  @Test
  public void staleDirectoriesOfGoneDaemonsAreRemoved() throws Exception {
    File sock = new File(tempDir(), "sock");
    CoprocessSupervisor.ensureDir(sock);
    // A pid that cannot be alive (above the kernel's pid_max).
    File stale = CoprocessSupervisor.workDir(sock, "namenode", 1L << 30);
    File staleFull = CoprocessSupervisor.workDir(sock, "namenode", (1L << 30) + 1);
    Files.createDirectory(stale.toPath());
    Files.createDirectory(staleFull.toPath());
    Files.write(new File(staleFull, "core").toPath(), new byte[1]);
    File bin = new File(sock.getParentFile(), "fake-ext");
    Files.write(bin.toPath(), "#!/bin/sh\nexit 0\n".getBytes(StandardCharsets.UTF_8));
    assertTrue(bin.setExecutable(true, true));
    Configuration conf = new Configuration(false);
    conf.set(HookConf.NAMENODE_BINARY, bin.getPath());
    conf.set(HookConf.SOCKET_DIR, sock.getPath());
    conf.set(HookConf.LOG_DIR, sock.getParent());
    conf.setLong(HookConf.BACKOFF_INITIAL_MS, 60_000);
    CoprocessSupervisor s = new CoprocessSupervisor("namenode", "nn", "unix:///none",
        Collections.emptyMap(), new HookConf(conf, HookConf.NAMENODE_BINARY),
        new HookMetrics("test-workdir-stale"));
    CountDownLatch failed = new CountDownLatch(1);
    s.backoffListener = w -> failed.countDown();
    s.start();
    try {
      assertTrue(failed.await(20, TimeUnit.SECONDS));
      assertFalse("an empty directory of a gone daemon is removed", stale.exists());
      assertTrue("one with files in it is kept", staleFull.isDirectory());
    } finally {
      s.stop();
    }
  }
}
