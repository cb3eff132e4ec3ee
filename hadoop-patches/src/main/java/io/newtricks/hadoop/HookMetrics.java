package io.newtricks.hadoop;

import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.Interns;
import org.apache.hadoop.metrics2.lib.MetricsRegistry;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.apache.hadoop.metrics2.lib.MutableGaugeInt;
import org.apache.hadoop.metrics2.lib.MutableGaugeLong;
import org.apache.hadoop.metrics2.lib.MutableRate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counters of one hook as a metrics2 source. In a NameNode it shows up in JMX as
 * {@code Hadoop:service=NameNode,name=NewtricksNameNodeHook}; in a DataNode as
 * {@code Hadoop:service=DataNode,name=NewtricksDataNodeHook}.
 */
final class HookMetrics implements MetricsSource {
  static final String NAMENODE_SOURCE = "NewtricksNameNodeHook";
  static final String DATANODE_SOURCE = "NewtricksDataNodeHook";
  private static final Logger LOG = LoggerFactory.getLogger(HookMetrics.class);

  private final String name;
  private final MetricsRegistry registry;
  private volatile boolean registered;

  final MutableCounterLong auditForwarded;
  final MutableCounterLong namespaceForwarded;
  final MutableCounterLong batchesDelivered;
  final MutableCounterLong batchesFailed;
  final MutableCounterLong heartbeats;
  final MutableCounterLong namespaceGaps;
  final MutableCounterLong coprocessStarts;
  final MutableCounterLong coprocessRestarts;
  final MutableCounterLong coprocessStartFailures;
  final MutableCounterLong healthCheckFailures;
  final MutableCounterLong healthChecksSkipped;
  final MutableGaugeInt coprocessHealthy;
  final MutableGaugeLong lastAckedTxid;
  final MutableGaugeLong pendingNamespaceEvents;
  final MutableCounterLong hostCalls;
  final MutableCounterLong hostCallErrors;
  final MutableRate hostCallLatency;
  final MutableRate deliverLatency;
  final MutableGaugeLong persistedTxid;
  final MutableCounterLong journalCatchUpOps;
  final MutableCounterLong editLogRolls;

  HookMetrics(String name) {
    this.name = name;
    this.registry = new MetricsRegistry(name).setContext("newtricks");
    auditForwarded = registry.newCounter("AuditEventsForwarded", "audit events acknowledged by the co-process", 0L);
    namespaceForwarded = registry.newCounter("NamespaceEventsForwarded", "inotify events acknowledged by the co-process", 0L);
    batchesDelivered = registry.newCounter("BatchesDelivered", "event batches acknowledged", 0L);
    heartbeats = registry.newCounter("DeliverHeartbeats", "empty batches delivered after a second without one (they bring filter changes)", 0L);
    batchesFailed = registry.newCounter("BatchesFailed", "EventSink/Deliver attempts that failed (batch kept and retried)", 0L);
    namespaceGaps = registry.newCounter("NamespaceGaps", "times the inotify tailer skipped over missing edits", 0L);
    coprocessStarts = registry.newCounter("CoprocessStarts", "successful co-process starts (handshake+health+Configure)", 0L);
    coprocessRestarts = registry.newCounter("CoprocessRestarts", "co-process restarts after exit or failed health", 0L);
    coprocessStartFailures = registry.newCounter("CoprocessStartFailures", "failed co-process start attempts", 0L);
    healthCheckFailures = registry.newCounter("HealthCheckFailures", "failed go-plugin health checks", 0L);
    healthChecksSkipped = registry.newCounter("HealthChecksSkipped", "health checks not sent because the co-process answered a Deliver within the interval", 0L);
    coprocessHealthy = registry.newGauge("CoprocessHealthy", "1 when the co-process is up, healthy and configured", 0);
    lastAckedTxid = registry.newGauge("LastAckedTxid", "highest namespace txid acknowledged by the co-process", -1L);
    pendingNamespaceEvents = registry.newGauge("PendingNamespaceEvents", "inotify events read but not yet acknowledged", 0L);
    hostCalls = registry.newCounter("HostCalls", "host gRPC calls served", 0L);
    hostCallErrors = registry.newCounter("HostCallErrors", "host gRPC calls that returned an error", 0L);
    hostCallLatency = registry.newRate("HostCall", "host gRPC call latency (ms)", false);
    deliverLatency = registry.newRate("Deliver", "EventSink/Deliver latency (ms)", false);
    persistedTxid = registry.newGauge("PersistedTxid", "namespace txid the stream resumes after on restart", -1L);
    journalCatchUpOps = registry.newCounter("JournalCatchUpOps", "edit-log ops read from finalized segments to fill holes in the event journal's capture", 0L);
    editLogRolls = registry.newCounter("EditLogRolls", "edit-log rolls requested to read a hole from a finalized segment", 0L);
  }

  /** Registers this source with the daemon's metrics system; failures are logged, not thrown. */
  HookMetrics register() {
    try {
      DefaultMetricsSystem.instance().register(name, "newtricks hook counters", this);
      registered = true;
    } catch (Throwable t) {
      LOG.warn("newtricks: could not register metrics source {}: {}", name, t.toString());
    }
    return this;
  }

  void unregister() {
    if (registered) {
      registered = false;
      try {
        DefaultMetricsSystem.instance().unregisterSource(name);
      } catch (Throwable t) {
        LOG.debug("newtricks: unregister {}", name, t);
      }
    }
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder rb = collector.addRecord(registry.info());
    registry.snapshot(rb, all);
    if (!name.equals(NAMENODE_SOURCE)) {
      return;
    }
    EventHub hub = EventHub.get();
    rb.addCounter(Interns.info("AuditQueued", "audit events accepted into the queue"), hub.accepted());
    rb.addCounter(Interns.info("AuditDropped", "audit events dropped because the queue was full"), hub.dropped());
    rb.addGauge(Interns.info("AuditQueueSize", "audit events waiting in the queue"), hub.size());
    rb.addCounter(Interns.info("AuditFiltered", "audited calls not forwarded (nobody subscribed, or no healthy co-process)"), hub.filtered());
    rb.addCounter(Interns.info("AuditHeld", "audit records held by the repeat hold until their (cmd, src) pair repeats"), hub.holdHeld.sum());
    rb.addCounter(Interns.info("AuditHoldReleased", "held audit records queued because their pair reached the subscription's repeat count"), hub.holdReleased.sum());
    rb.addCounter(Interns.info("AuditHoldExpired", "held audit records discarded: their pair did not repeat within the window (or the hold was reset)"), hub.holdExpired.sum());
    rb.addCounter(Interns.info("AuditHoldOverflow", "audit records queued directly because the repeat hold's table was full"), hub.holdOverflow.sum());
    rb.addGauge(Interns.info("AuditHoldEntries", "(cmd, src) pairs the repeat hold tracks"), hub.holdEntries());
    EditCapture cap = EditCapture.get();
    rb.addGauge(Interns.info("JournalInstalled", "1 if the event journal is in dfs.namenode.edits.dir"), cap.installed() ? 1 : 0);
    rb.addCounter(Interns.info("JournalCaptured", "namespace events captured by the event journal"), cap.captured.sum());
    rb.addCounter(Interns.info("JournalDroppedChunks", "edit-log flushes the event journal dropped because its queue was full"), cap.droppedChunks.sum());
    rb.addGauge(Interns.info("JournalQueued", "captured events waiting for the tailer"), cap.queued());
  }
}
