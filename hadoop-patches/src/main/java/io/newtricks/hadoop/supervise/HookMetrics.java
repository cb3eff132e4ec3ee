package io.newtricks.hadoop.supervise;

import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.MetricsRegistry;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.apache.hadoop.metrics2.lib.MutableGaugeInt;
import org.apache.hadoop.metrics2.lib.MutableGaugeLong;
import org.apache.hadoop.metrics2.lib.MutableRate;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counters of one hook as a metrics2 source. In a NameNode it shows up in JMX as
 * {@code Hadoop:service=NameNode,name=NewtricksNameNodeHook}; in a DataNode as
 * {@code Hadoop:service=DataNode,name=NewtricksDataNodeHook}. Public, with its counters, because
 * every part of the hook counts into it.
 */
public final class HookMetrics implements MetricsSource {
  public static final String NAMENODE_SOURCE = "NewtricksNameNodeHook";
  public static final String DATANODE_SOURCE = "NewtricksDataNodeHook";
  private static final Logger LOG = LoggerFactory.getLogger(HookMetrics.class);

  private final String name;
  private final MetricsRegistry registry;
  private final Consumer<MetricsRecordBuilder> more;
  private volatile boolean registered;

  public final MutableCounterLong auditForwarded;
  public final MutableCounterLong namespaceForwarded;
  public final MutableCounterLong batchesDelivered;
  public final MutableCounterLong batchesFailed;
  public final MutableCounterLong heartbeats;
  public final MutableCounterLong namespaceGaps;
  public final MutableCounterLong coprocessStarts;
  public final MutableCounterLong coprocessRestarts;
  public final MutableCounterLong coprocessStartFailures;
  public final MutableCounterLong healthCheckFailures;
  public final MutableCounterLong healthChecksSkipped;
  public final MutableGaugeInt coprocessHealthy;
  public final MutableGaugeLong lastAckedTxid;
  public final MutableGaugeLong pendingNamespaceEvents;
  public final MutableCounterLong hostCalls;
  public final MutableCounterLong hostCallErrors;
  public final MutableRate hostCallLatency;
  public final MutableRate deliverLatency;
  public final MutableGaugeLong persistedTxid;
  public final MutableCounterLong journalCatchUpOps;
  public final MutableCounterLong editLogRolls;

  public HookMetrics(String name) {
    this(name, null);
  }

  /**
   * @param more adds figures kept elsewhere to each snapshot (the NameNode's: its audit queue
   *     and event journal, which live per JVM, not per hook); null: none
   */
  public HookMetrics(String name, Consumer<MetricsRecordBuilder> more) {
    this.name = name;
    this.more = more;
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
  public HookMetrics register() {
    try {
      DefaultMetricsSystem.instance().register(name, "newtricks hook counters", this);
      registered = true;
    } catch (Throwable t) {
      LOG.warn("newtricks: could not register metrics source {}: {}", name, t.toString());
    }
    return this;
  }

  public void unregister() {
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
    if (more != null) {
      more.accept(rb);
    }
  }
}
