package io.newtricks.hadoop.events;

import java.net.InetAddress;

/**
 * One audited NameNode call, as captured on the RPC handler thread. Kept as cheap as possible:
 * conversion to the wire type happens later on the forwarder thread.
 */
public final class AuditRecord {
  final String cmd;
  final String src;
  final String dst;
  final String user;
  final InetAddress clientAddr;
  final boolean allowed;
  final long timeMs;
  final String callerContext;

  public AuditRecord(String cmd, String src, String dst, String user, InetAddress clientAddr,
      boolean allowed, long timeMs, String callerContext) {
    this.cmd = cmd;
    this.src = src;
    this.dst = dst;
    this.user = user;
    this.clientAddr = clientAddr;
    this.allowed = allowed;
    this.timeMs = timeMs;
    this.callerContext = callerContext;
  }
}
