package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.NameNodeState;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSUtil;
import org.apache.hadoop.hdfs.HAUtil;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.lib.Interns;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NameNode's event stream to namenode-ext, as the NameNode plugin runs it: the per-JVM audit
 * queue ({@link EventHub}), the namespace-event tailer (the event journal's capture if the
 * journal is installed, else the edit log polled through inotify) and the
 * {@link EventForwarder} that delivers both. The one entry to this package for the plugin, so
 * its parts stay package-private.
 */
public final class EventStream {
  private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);

  private final EventForwarder forwarder;

  private EventStream(EventForwarder forwarder) {
    this.forwarder = forwarder;
  }

  /**
   * No co-process will ever drain the stream (its binary is not configured): the audit queue
   * accepts nothing and the event journal captures nothing.
   */
  public static void disable() {
    EventHub.get().close();
    EditCapture.get().select(EditCapture.Selection.NONE);
  }

  /**
   * Opens the audit queue and builds the forwarder for {@code nn}, delivering to {@code link},
   * resumed from the state file (newtricks.events.state.file) if it is readable. Not started.
   */
  public static EventStream open(NameNode nn, CoprocessLink link, HookMetrics m, HookConf hc) {
    EventHub hub = EventHub.get();
    hub.open();
    NamespaceTailer tailer;
    // On an HA NameNode the journal is installed only when it first becomes active: the
    // configuration says whether it will be.
    if (EditCapture.get().installed() || journalConfigured(nn.getConf())) {
      // The NameNode writes its edits through our journal: events stream as they are synced.
      tailer = new JournalTailer(EditCapture.get(), JournalTailer.of(nn), hc.inotifyPollMs,
          hc.rollMinIntervalMs, hc.inotifyMaxPending, m);
      LOG.info("newtricks: namespace events from the event journal");
    } else {
      // getEditsFromTxid reads this key from the NameNode's conf on every call.
      String perRpc = DFSConfigKeys.DFS_NAMENODE_INOTIFY_MAX_EVENTS_PER_RPC_KEY;
      if (nn.getConf().getInt(perRpc, DFSConfigKeys.DFS_NAMENODE_INOTIFY_MAX_EVENTS_PER_RPC_DEFAULT)
          < hc.inotifyEventsPerRead) {
        nn.getConf().setInt(perRpc, hc.inotifyEventsPerRead);
      }
      tailer = new InotifyTailer(InotifyTailer.of(nn.getRpcServer()),
          hc.inotifyPollMs, hc.inotifyMaxPending, hc.inotifyCostFactor, m);
      LOG.info("newtricks: namespace events polled from the edit log (inotify); add the event "
          + "journal to dfs.namenode.edits.dir to stream them (BUILDING.md)");
    }
    boolean ha = haEnabled(nn.getConf());
    EventForwarder f = new EventForwarder(hub, tailer, link, m, hc, ha, () -> stateOf(nn));
    if (ha) {
      LOG.info("newtricks: HA NameNode: namenode-ext acts while this NameNode is active only");
    }
    try {
      f.resume(EventState.load(hc.stateFile));
    } catch (Throwable t) {
      LOG.warn("newtricks: ignoring unreadable event state {}: {}", hc.stateFile, t.toString());
    }
    return new EventStream(f);
  }

  /** Whether the NameNode is one of an HA nameservice. */
  static boolean haEnabled(Configuration conf) {
    try {
      return HAUtil.isHAEnabled(conf, DFSUtil.getNamenodeNameServiceId(conf));
    } catch (Throwable t) {
      return false;
    }
  }

  /** The NameNode's HA state: reads its state field, never takes a lock. */
  static NameNodeState stateOf(NameNode nn) {
    if (nn.isActiveState()) {
      return NameNodeState.NAMENODE_STATE_ACTIVE;
    }
    if (nn.isStandbyState()) {
      return NameNodeState.NAMENODE_STATE_STANDBY;
    }
    return NameNodeState.NAMENODE_STATE_OTHER;
  }

  /**
   * Whether dfs.namenode.edits.dir names a newtricks:// journal with its plugin class set (the
   * event journal), before the NameNode has created it.
   */
  static boolean journalConfigured(Configuration conf) {
    if (conf.get("dfs.namenode.edits.journal-plugin.newtricks") == null) {
      return false;
    }
    for (String d : conf.getTrimmedStrings(DFSConfigKeys.DFS_NAMENODE_EDITS_DIR_KEY)) {
      if (d.startsWith("newtricks:")) {
        return true;
      }
    }
    return false;
  }

  /** Starts the forwarder thread. */
  public void start() {
    forwarder.start();
  }

  /** Stops the forwarder and saves the resume point. */
  public void stop() {
    forwarder.stop();
  }

  /**
   * Adds the per-JVM figures of the audit queue, its repeat hold and the event journal to the
   * NameNode hook's metrics record (JMX NewtricksNameNodeHook).
   */
  public static void addMetrics(MetricsRecordBuilder rb) {
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
