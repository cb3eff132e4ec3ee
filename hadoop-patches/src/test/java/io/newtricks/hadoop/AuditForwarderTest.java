package io.newtricks.hadoop;

import static org.junit.Assert.assertEquals;

import io.newtricks.hadoop.supervise.HookConf;
import org.junit.Test;

public class AuditForwarderTest {
  @Test
  public void auditLoggerNeverThrows() {
    AuditForwarder f = new AuditForwarder();
    // Null everything: must neither throw nor block.
    f.logAuditEvent(true, null, null, null, null, null, null, null, null, null);
    assertEquals("alice", AuditForwarder.shortName("alice (auth:SIMPLE)"));
    assertEquals("nn", AuditForwarder.shortName("nn/host.example.com@EXAMPLE.COM"));
    assertEquals("", AuditForwarder.shortName(null));
  }

  @Test
  public void theHookConfNamesTheAuditLoggerAsConfigured() {
    // HookConf tells from dfs.namenode.audit.loggers whether the audit logger is on by this name.
    assertEquals(AuditForwarder.class.getName(), HookConf.AUDIT_FORWARDER_CLASS);
  }
}
