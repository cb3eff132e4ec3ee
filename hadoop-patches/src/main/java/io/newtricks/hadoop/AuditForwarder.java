package io.newtricks.hadoop;

import io.newtricks.hadoop.events.AuditRecord;
import io.newtricks.hadoop.events.EventHub;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.Prewarm;
import java.net.InetAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenSecretManager;
import org.apache.hadoop.hdfs.server.namenode.HdfsAuditLogger;
import org.apache.hadoop.ipc.CallerContext;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Audit logger ({@code dfs.namenode.audit.loggers=default,io.newtricks.hadoop.AuditForwarder})
 * that copies the audited calls a healthy co-process subscribed to into the bounded
 * {@link EventHub} queue.
 *
 * <p>FSNamesystem calls it synchronously on the RPC handler thread before the reply, and an
 * exception would reach the client: so its first line drops every command nobody subscribed to
 * (one volatile read, no allocation), and the rest only offers to a bounded queue (or, under
 * the subscription's repeat hold, to the bounded AuditHold table), never blocks, and
 * catches everything.
 */
public class AuditForwarder extends HdfsAuditLogger {
  private final EventHub hub = EventHub.get();

  @Override
  public void initialize(Configuration conf) {
    // FSNamesystem is being built: load the gRPC code meanwhile.
    Prewarm.start(conf, HookConf.NAMENODE_BINARY);
    try {
      hub.configure(conf);
    } catch (Throwable t) {
      // Never fail NameNode startup because of the hook.
    }
  }

  @Override
  public void logAuditEvent(boolean succeeded, String userName, InetAddress addr, String cmd,
      String src, String dst, FileStatus stat, CallerContext callerContext,
      UserGroupInformation ugi, DelegationTokenSecretManager dtSecretManager) {
    if (!hub.wants(cmd)) {
      hub.countFiltered();
      return;
    }
    try {
      String user = ugi != null ? ugi.getShortUserName() : shortName(userName);
      String ctx = callerContext != null ? callerContext.getContext() : null;
      hub.admit(new AuditRecord(cmd, src, dst, user, addr, succeeded,
          System.currentTimeMillis(), ctx));
    } catch (Throwable t) {
      // Best effort: an audit copy must never fail or slow the client call.
    }
  }

  @Override
  public void logAuditEvent(boolean succeeded, String userName, InetAddress addr, String cmd,
      String src, String dst, FileStatus stat, UserGroupInformation ugi,
      DelegationTokenSecretManager dtSecretManager) {
    logAuditEvent(succeeded, userName, addr, cmd, src, dst, stat, null, ugi, dtSecretManager);
  }

  /** "alice (auth:SIMPLE)" or "alice/host@REALM" -> "alice". */
  static String shortName(String userName) {
    if (userName == null) {
      return "";
    }
    String s = userName;
    int sp = s.indexOf(' ');
    if (sp >= 0) {
      s = s.substring(0, sp);
    }
    int cut = s.length();
    int slash = s.indexOf('/');
    int at = s.indexOf('@');
    if (slash >= 0) {
      cut = Math.min(cut, slash);
    }
    if (at >= 0) {
      cut = Math.min(cut, at);
    }
    return s.substring(0, cut);
  }
}
