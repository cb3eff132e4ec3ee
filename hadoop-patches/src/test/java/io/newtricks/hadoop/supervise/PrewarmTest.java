package io.newtricks.hadoop.supervise;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

public class PrewarmTest {
  @Test
  public void warmsUpOnceWithARoundTripAndLeavesNoSocket() throws Exception {
    File dir = Files.createTempDirectory("nt-warm").toFile();
    File sockDir = new File(dir, "s");
    Configuration conf = new Configuration(false);
    // Without a co-process binary nothing is warmed up.
    Prewarm.start(conf, HookConf.NAMENODE_BINARY);
    assertTrue(Prewarm.await(1));
    conf.set(HookConf.NAMENODE_BINARY, "/bin/true");
    conf.set(HookConf.SOCKET_DIR, sockDir.getPath());
    Prewarm.start(conf, HookConf.NAMENODE_BINARY);
    Prewarm.start(conf, HookConf.NAMENODE_BINARY); // once per JVM
    assertTrue("warm-up still running after 60 s", Prewarm.await(60_000));
    assertTrue("no gRPC round trip", Prewarm.warmed);
    // The socket dir is made like the supervisor makes it, and the socket is gone.
    assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(sockDir.toPath())));
    String[] left = sockDir.list();
    assertEquals(0, left == null ? 0 : left.length);
  }
}
