/**
 * newtricks hooks that run inside a Hadoop NameNode or DataNode.
 *
 * <p>Java decides nothing here: the classes launch and supervise the Go co-process
 * (namenode-ext / datanode-ext) as a hashicorp/go-plugin host, forward audit and inotify events
 * to it without ever blocking a Hadoop thread, and serve the few calls that must run inside the
 * daemon (host gRPC services). Everything else lives in Go.
 *
 * <p>Enable in hdfs-site.xml:
 * <pre>
 *   dfs.namenode.plugins         = io.newtricks.hadoop.NameNodePlugin
 *   dfs.namenode.audit.loggers   = default,io.newtricks.hadoop.AuditForwarder
 *   dfs.datanode.plugins         = io.newtricks.hadoop.DataNodePlugin
 *   newtricks.namenode.ext.binary = /path/to/namenode-ext
 *   newtricks.datanode.ext.binary = /path/to/datanode-ext
 * </pre>
 * Every key is documented in {@link io.newtricks.hadoop.HookConf}.
 */
package io.newtricks.hadoop;
