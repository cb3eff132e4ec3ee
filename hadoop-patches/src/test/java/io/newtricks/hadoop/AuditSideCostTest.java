package io.newtricks.hadoop;

import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.CallerContext;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.Test;

/**
 * What an audited call costs the NameNode because of the audit logger when nothing is
 * subscribed, in CPU nanoseconds per call, measured on this thread (so stable under machine
 * load): what FSNamesystem does once isAuditEnabled() is true (the user string, the caller
 * context, one more logger in its loop) plus the logger's own filter. With Hadoop's defaults
 * (the nntop audit logger on) FSNamesystem does the first part anyway; it is extra only with
 * dfs.namenode.top.enabled=false and the audit log off. Printed for BUILDING.md; the assertion
 * only guards against a regression by orders of magnitude.
 */
public class AuditSideCostTest {
  @Test
  public void sideCostPerCall() throws Exception {
    AuditForwarder fwd = new AuditForwarder();
    fwd.initialize(new Configuration(false));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser("alice");
    InetAddress addr = InetAddress.getByName("10.1.2.3");
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long sink = 0;
    long[] ns = new long[2];
    for (int round = 0; round < 3; round++) { // the first rounds let the JIT compile
      int n = 2_000_000;
      long t0 = mx.getCurrentThreadCpuTime();
      for (int i = 0; i < n; i++) {
        // FSNamesystem.logAuditEvent once isAuditEnabled(): the user string for the loggers...
        String ugiStr = ugi.toString();
        // ...and, per HdfsAuditLogger, the caller context and the call.
        fwd.logAuditEvent(true, ugiStr, addr, "getfileinfo", "/a/b/c", null, null,
            CallerContext.getCurrent(), ugi, null);
        sink += ugiStr.length();
      }
      long t1 = mx.getCurrentThreadCpuTime();
      for (int i = 0; i < n; i++) {
        fwd.logAuditEvent(true, "alice (auth:SIMPLE)", addr, "getfileinfo", "/a/b/c", null, null,
            CallerContext.getCurrent(), ugi, null);
      }
      long t2 = mx.getCurrentThreadCpuTime();
      ns[0] = (t1 - t0) / n;
      ns[1] = (t2 - t1) / n;
    }
    System.out.println("AUDIT-SIDE-COST ns/call: FSNamesystem's audit work + filtered logger "
        + ns[0] + ", the logger's filter alone " + ns[1] + " (sink " + (sink % 10) + ")");
    assertTrue("side cost " + ns[0] + " ns/call", ns[0] < 20_000);
  }
}
