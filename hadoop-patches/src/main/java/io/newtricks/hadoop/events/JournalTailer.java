package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.HookMetrics;
import java.io.IOException;
import java.util.Collection;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;
import org.apache.hadoop.hdfs.server.namenode.EditLogInputStream;
import org.apache.hadoop.hdfs.server.namenode.FSEditLog;
import org.apache.hadoop.hdfs.server.namenode.FSEditLogOp;
import org.apache.hadoop.hdfs.server.namenode.InotifyFSEditLogOpTranslator;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Namespace events from the event journal ({@link CaptureJournal}): takes the chunks it
 * captured while they are contiguous with what was read, and fills every hole (capture paused
 * on overflow, an op it could not translate, the stretch before a restarted NameNode's new
 * segment) from the NameNode's finalized edit-log segments. A hole that reaches into the in-progress segment is
 * closed by rolling the edit log (at most once per newtricks.events.roll.min.interval.ms), never
 * by scanning the in-progress segment.
 *
 * <p>Not thread-safe: driven only by the {@link EventForwarder} thread.
 */
final class JournalTailer extends NamespaceTailer {
  private static final Logger LOG = LoggerFactory.getLogger(JournalTailer.class);
  /** Edit-log ops read from finalized segments per poll, so one poll stays short. */
  static final int MAX_OPS_PER_READ = 50_000;

  /** The NameNode's edit log, as the tailer uses it. */
  interface Log {
    long currentTxid() throws IOException;

    /**
     * Reads finalized segments from txid {@code from} up to {@code to} (at most maxOps ops),
     * handing each translated event to sink; returns the last txid read, from - 1 if none, or
     * -(first available txid) if {@code from} was purged.
     */
    long readFinalized(long from, long to, int maxOps, EventSink sink) throws IOException;

    void roll() throws IOException;
  }

  interface EventSink {
    void accept(long txid, Event e);
  }

  private final EditCapture capture;
  private final Log log;
  private final long pollMs;
  private final long rollMinIntervalMs;
  private long nextCatchUpAt;
  private long lastRollAt = Long.MIN_VALUE / 2;
  private long gapSeenAt = -1;
  private long backoffMs;
  private long lastSynced = -1;
  private long lastSyncedAt;
  private long quietTarget = -1;
  private boolean checkedPosition;
  /** How long without a synced edit before the tailer asks the NameNode for its txid. */
  static final long QUIET_CHECK_MS = 1_000;

  JournalTailer(EditCapture capture, Log log, long pollMs, long rollMinIntervalMs, int maxPending,
      HookMetrics metrics) {
    super(maxPending, metrics);
    this.capture = capture;
    this.log = log;
    this.pollMs = Math.max(1, pollMs);
    this.rollMinIntervalMs = rollMinIntervalMs;
    this.backoffMs = this.pollMs;
  }

  @Override
  void setWakeup(Wakeup w) {
    capture.setWakeup(w);
  }

  @Override
  boolean hasArrived() {
    return capture.peek() != null;
  }

  /**
   * Caught up with everything the journal reported, nothing captured and no catch-up pending:
   * the next thing to do without a signal from the journal is the quiet check (a journal that
   * JournalSet disabled reports nothing while the NameNode keeps writing). Otherwise now.
   */
  @Override
  long idleUntil(long nowMs) {
    if (!wantsAny()) {
      return Long.MAX_VALUE;
    }
    if (cursor < 0 || !checkedPosition || gapSeenAt >= 0 || capture.isPaused()
        || capture.peek() != null || cursor < Math.max(capture.lastSyncedTxid(), quietTarget)) {
      return nowMs;
    }
    return lastSyncedAt + QUIET_CHECK_MS;
  }

  @Override
  void setFilter(Collection<io.newtricks.proto.v1.NamespaceEvent.Type> t, java.util.List<String> p) {
    super.setFilter(t, p);
    capture.select(EditCapture.Selection.of(types(), java.util.Arrays.asList(prefixes())));
  }

  @Override
  void maybePoll(long nowMs) {
    try {
      if (cursor < 0) {
        cursor = log.currentTxid();
        startAfter(cursor);
        checkedPosition = true;
        LOG.info("newtricks: event journal tailer starts after txid {}", cursor);
      } else if (!checkedPosition) {
        // A resume point beyond the edit log (a reformatted NameNode with an old state file)
        // would silently drop every event until the txids caught up: start from the present.
        long current = log.currentTxid();
        checkedPosition = true;
        if (cursor > current) {
          LOG.warn("newtricks: resume point txid {} is beyond the edit log (txid {}); starting "
              + "from the present", cursor, current);
          restartAfter(current);
          cursor = current;
          startAfter(current);
        }
      }
      capture.resumeIfDrained();
      if (!wantsAny()) {
        capture.clear();
        cursor = Math.max(cursor, capture.lastSyncedTxid());
        return;
      }
      // Read lastSynced before peeking: a chunk is queued before lastSynced moves past it.
      long synced = capture.lastSyncedTxid();
      if (synced > lastSynced) {
        lastSynced = synced;
        lastSyncedAt = nowMs;
      } else if (nowMs - lastSyncedAt >= QUIET_CHECK_MS && capture.peek() == null) {
        // Nothing synced through the journal for a while: if the NameNode wrote edits anyway,
        // JournalSet has disabled the journal (it failed): read those edits from the log.
        lastSyncedAt = nowMs;
        long current = log.currentTxid();
        if (current > lastSynced) {
          synced = current;
          quietTarget = current;
        }
      }
      synced = Math.max(synced, quietTarget);
      takeLive();
      EditCapture.Chunk head = capture.peek();
      long target = head != null ? head.from - 1 : synced;
      if (cursor >= target || !hasRoom()) {
        gapSeenAt = -1;
        return;
      }
      if (gapSeenAt < 0) {
        gapSeenAt = nowMs; // a chunk may be on its way: give it one poll interval
      }
      if (nowMs < nextCatchUpAt || nowMs - gapSeenAt < pollMs) {
        return;
      }
      catchUp(target, nowMs);
      takeLive();
    } catch (Throwable t) {
      backoffMs = Math.min(backoffMs * 2, 5_000);
      nextCatchUpAt = nowMs + backoffMs;
      LOG.info("newtricks: event journal catch-up after txid {} deferred {} ms: {}", cursor,
          backoffMs, t.toString());
    }
  }

  /** Takes captured chunks while they continue the stream. */
  private void takeLive() {
    EditCapture.Chunk c;
    while (hasRoom() && (c = capture.peek()) != null) {
      if (c.to <= cursor) {
        capture.pop();
        continue;
      }
      if (c.from > cursor + 1) {
        return; // hole: caught up from the edit log
      }
      for (EditCapture.Captured x : c.events) {
        if (x.txid > cursor) {
          offer(x.txid, x.event);
        }
      }
      cursor = c.to;
      capture.pop();
    }
  }

  private void catchUp(long target, long nowMs) throws IOException {
    long from = cursor + 1;
    long last = log.readFinalized(from, target, MAX_OPS_PER_READ, this::offerRead);
    if (last < -1) {
      long firstAvailable = -last;
      LOG.warn("newtricks: namespace events {}..{} are lost (edits purged); skipping ahead",
          from, firstAvailable - 1);
      metrics.namespaceGaps.incr();
      cursor = firstAvailable - 1;
      return;
    }
    if (last >= from) {
      metrics.journalCatchUpOps.incr(last - from + 1);
      cursor = last;
    }
    backoffMs = pollMs;
    nextCatchUpAt = nowMs + pollMs;
    boolean exhausted = last < from || last - from + 1 < MAX_OPS_PER_READ;
    if (cursor < target && exhausted && nowMs - lastRollAt < rollMinIntervalMs) {
      // The rest is in the in-progress segment and we may not roll yet: read again after the
      // next roll, not on every poll.
      nextCatchUpAt = lastRollAt + rollMinIntervalMs;
      return;
    }
    if (cursor < target && exhausted) {
      // The hole is in the in-progress segment: finalize it instead of scanning it.
      lastRollAt = nowMs;
      log.roll();
      metrics.editLogRolls.incr();
      LOG.info("newtricks: rolled the edit log to read txids {}..{} from a finalized segment",
          from, target);
    }
  }

  private void offerRead(long txid, Event e) {
    offer(txid, e);
  }

  @Override
  protected void reposition(long txid) {
    super.reposition(txid);
    nextCatchUpAt = 0;
    gapSeenAt = -1;
    backoffMs = pollMs;
    checkedPosition = false; // a position from another NameNode's term is checked again
  }

  /** The real edit log of a NameNode. */
  static Log of(NameNode nn) {
    NamenodeProtocols rpc = nn.getRpcServer();
    return new Log() {
      @Override
      public long currentTxid() throws IOException {
        return rpc.getCurrentEditLogTxid();
      }

      @Override
      public long readFinalized(long from, long to, int maxOps, EventSink sink) throws IOException {
        FSEditLog editLog = nn.getFSImage().getEditLog();
        Collection<EditLogInputStream> streams = editLog.selectInputStreams(from, 0, null, false);
        long last = from - 1;
        int n = 0;
        try {
          for (EditLogInputStream s : streams) {
            if (s.getFirstTxId() > last + 1) {
              if (last == from - 1) {
                return -s.getFirstTxId();
              }
              return last; // a hole between segments: the next call reports it
            }
            FSEditLogOp op;
            while ((op = s.readOp()) != null) {
              long t = op.getTransactionId();
              if (t <= last) {
                continue;
              }
              if (t > to) {
                return last;
              }
              EventBatch eb = InotifyFSEditLogOpTranslator.translate(op);
              if (eb != null) {
                for (Event e : eb.getEvents()) {
                  sink.accept(t, e);
                }
              }
              last = t;
              if (++n >= maxOps) {
                return last;
              }
            }
          }
        } finally {
          for (EditLogInputStream s : streams) {
            try {
              s.close();
            } catch (IOException e) {
              // read-only stream
            }
          }
        }
        return last;
      }

      @Override
      public void roll() throws IOException {
        rpc.rollEditLog();
      }
    };
  }
}
