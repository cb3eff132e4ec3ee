/**
 * The host gRPC services the co-process calls back on a unix socket ({@link
 * io.newtricks.hadoop.host.HostServer}, with bounded admission): NameNodeHost, DataNodeHost and
 * SecurityHost (host.proto). Each call runs as a named user or, explicitly, as the service;
 * Hadoop exceptions become gRPC codes in one table (StatusMapping).
 */
package io.newtricks.hadoop.host;
