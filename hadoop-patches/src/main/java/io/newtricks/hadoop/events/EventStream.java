package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import org.apache.hadoop.hdfs.DFSConfigKeys;
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
    if (EditCapture.get().installed()) {
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
    EventForwarder f = new EventForwarder(hub, tailer, link, m, hc);
    try {
      f.resume(EventState.load(hc.stateFile));
    } catch (Throwable t) {
      LOG.warn("newtricks: ignoring unreadable event state {}: {}", hc.stateFile, t.toString());
    }
    return new EventStream(f);
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
