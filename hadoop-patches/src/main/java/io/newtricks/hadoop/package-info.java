/**
 * newtricks hooks that run inside a Hadoop NameNode or DataNode: this package holds the classes
 * admins name in hdfs-site.xml, which never move, and the plugins' shared lifecycle.
 *
 * <p>Java decides nothing here, with one exception: the classes launch and supervise the Go
 * co-process (namenode-ext / datanode-ext) as a hashicorp/go-plugin host, forward audit and
 * namespace events to it without ever blocking a Hadoop thread, and serve the few calls that
 * must run inside the daemon (host gRPC services). Everything else lives in Go. The exception is
 * {@link io.newtricks.hadoop.BalancedReads}, which chooses the replica a reader of a hinted
 * file is sent to first: it runs inside the NameNode's block sort on the RPC handler thread, for
 * every block of every open, where a call to Go would block a Hadoop thread; namenode-ext only
 * tells it which files are hinted.
 *
 * <p>Enable in hdfs-site.xml:
 * <pre>
 *   dfs.namenode.plugins         = io.newtricks.hadoop.NameNodePlugin
 *   dfs.namenode.audit.loggers   = default,io.newtricks.hadoop.AuditForwarder
 *   dfs.datanode.plugins         = io.newtricks.hadoop.DataNodePlugin
 *   newtricks.namenode.ext.binary = /path/to/namenode-ext
 *   newtricks.datanode.ext.binary = /path/to/datanode-ext
 * </pre>
 * and optionally the event journal ({@link io.newtricks.hadoop.EventJournal}) and balanced reads.
 * Every key is documented in {@link io.newtricks.hadoop.supervise.HookConf}.
 *
 * <p>The code behind them: {@link io.newtricks.hadoop.supervise} (the co-process: launch,
 * handshake, health, restart; the hooks' configuration, metrics and unix-socket transport),
 * {@link io.newtricks.hadoop.events} (the audit queue, the namespace-event tailers and the
 * forwarder) and {@link io.newtricks.hadoop.host} (the host gRPC services). The classes in
 * {@code org.apache.hadoop.hdfs.server.namenode} use package-private NameNode internals.
 */
package io.newtricks.hadoop;
