package io.newtricks.hadoop.events;

import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;

/**
 * What one save of the event stream's resume point costs the forwarder thread (properties,
 * fsync, atomic rename): thread CPU and wall time per save, in the build's temp dir (the state
 * file's default is under hadoop.tmp.dir, on the NameNode's local disk too).
 */
public class StateSaveCostTest {
  @Test
  public void cpuPerSave() throws Exception {
    File dir = Files.createTempDirectory("nt-state").toFile();
    File f = new File(dir, "namenode-events.properties");
    ThreadMXBean tb = ManagementFactory.getThreadMXBean();
    int n = 200;
    double cpuUs = 0;
    double wallUs = 0;
    for (int round = 0; round < 2; round++) { // the last round counts
      long c0 = tb.getCurrentThreadCpuTime();
      long w0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        new EventState(1_000_000L + i,
            Arrays.asList(io.newtricks.proto.v1.NamespaceEvent.Type.CLOSE),
            Collections.singletonList("/ckpt/")).save(f);
      }
      cpuUs = (tb.getCurrentThreadCpuTime() - c0) / 1e3 / n;
      wallUs = (System.nanoTime() - w0) / 1e3 / n;
    }
    f.delete();
    dir.delete();
    String r = String.format("STATE-SAVE per save: %.0f us thread CPU, %.0f us wall", cpuUs, wallUs);
    System.out.println(r);
    assertTrue(r, cpuUs > 0);
  }
}
