package io.newtricks.hadoop.supervise;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/** The supervisor skips its health check while the co-process answers Delivers. */
public class HealthCheckSkipTest {
  @Test
  public void aDeliverAnsweredWithinTheIntervalReplacesTheHealthCheck() throws Exception {
    File dir = Files.createTempDirectory("hcskip").toFile();
    Configuration conf = new Configuration(false);
    conf.set(HookConf.NAMENODE_BINARY, new File(dir, "unused").getPath());
    conf.setLong(HookConf.HEALTH_INTERVAL_MS, 1_000);
    HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    CoprocessSupervisor s = new CoprocessSupervisor("namenode", "nn", "unix:///none",
        Collections.emptyMap(), hc, new HookMetrics("test-hcskip"));
    long now = System.nanoTime();
    assertTrue("nothing answered yet: check", s.healthCheckDue(now));
    s.answered();
    long at = System.nanoTime();
    assertFalse("answered just now: no check", s.healthCheckDue(at));
    assertFalse("answered 0.9 s ago: no check",
        s.healthCheckDue(at + TimeUnit.MILLISECONDS.toNanos(900)));
    assertTrue("answered a whole interval ago: check",
        s.healthCheckDue(at + TimeUnit.MILLISECONDS.toNanos(1_000)));
    dir.delete();
  }
}
