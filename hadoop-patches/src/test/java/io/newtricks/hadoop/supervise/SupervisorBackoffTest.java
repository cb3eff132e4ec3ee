package io.newtricks.hadoop.supervise;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

public class SupervisorBackoffTest {
  @Test
  public void missingBinaryIsRetriedWithDoublingWaitsUpToTheMax() throws Exception {
    File dir = Files.createTempDirectory("sup").toFile();
    Configuration conf = new Configuration(false);
    conf.set(HookConf.NAMENODE_BINARY, new File(dir, "no-such-binary").getPath());
    conf.set(HookConf.SOCKET_DIR, new File(dir, "sock").getPath());
    conf.set(HookConf.LOG_DIR, dir.getPath());
    conf.setLong(HookConf.BACKOFF_INITIAL_MS, 10);
    conf.setLong(HookConf.BACKOFF_MAX_MS, 80);
    HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    HookMetrics m = new HookMetrics("test-backoff");
    CoprocessSupervisor s = new CoprocessSupervisor("namenode", "nn", "unix:///none",
        Collections.emptyMap(), hc, m);
    List<Long> waits = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch seven = new CountDownLatch(7);
    s.backoffListener = w -> {
      waits.add(w);
      seven.countDown();
    };
    s.start();
    try {
      assertTrue("7 restart attempts within 10 s", seven.await(10, TimeUnit.SECONDS));
    } finally {
      s.stop();
    }
    List<Long> got = new ArrayList<>(waits).subList(0, 7);
    assertEquals(java.util.Arrays.asList(10L, 20L, 40L, 80L, 80L, 80L, 80L), got);
    assertTrue("every attempt counted", m.coprocessStartFailures.value() >= 7);
    assertFalse(s.isHealthy());
    assertEquals(0, m.coprocessStarts.value());
  }
}
