/**
 * The Go co-process, supervised from inside the daemon: {@link
 * io.newtricks.hadoop.supervise.CoprocessSupervisor} launches it as a hashicorp/go-plugin host
 * (cookie, {@link io.newtricks.hadoop.supervise.Handshake}, health, Configure, restart with
 * backoff, Shutdown then kill); {@link io.newtricks.hadoop.supervise.Prewarm} loads the gRPC code
 * early; {@link io.newtricks.hadoop.supervise.UnixSockets} is the transport. The hooks'
 * configuration ({@link io.newtricks.hadoop.supervise.HookConf}) and metrics ({@link
 * io.newtricks.hadoop.supervise.HookMetrics}) live here too: every other package reads them.
 */
package io.newtricks.hadoop.supervise;
