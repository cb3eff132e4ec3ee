package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.IOException;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;
import org.apache.hadoop.hdfs.inotify.EventBatchList;
import org.apache.hadoop.hdfs.server.namenode.SafeModeException;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;
import org.apache.hadoop.ipc.RetriableException;
import org.apache.hadoop.ipc.StandbyException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads namespace events from the NameNode's own edit log (ClientProtocol.getEditsFromTxid, the
 * call behind HDFS inotify) and keeps them until the co-process acknowledges them.
 *
 * <p>The fallback source of namespace events when the event journal ({@link CaptureJournal}) is
 * not configured: every read re-scans the in-progress edit-log segment, so reads are spaced by
 * their cost (see BUILDING.md). Not thread-safe: driven only by the {@link EventForwarder}
 * thread.
 */
final class InotifyTailer extends NamespaceTailer {
  private static final Logger LOG = LoggerFactory.getLogger(InotifyTailer.class);
  private static final long MAX_BACKOFF_MS = 5_000;
  /** Consecutive hard failures at one cursor before the tailer assumes the edits are gone. */
  private static final int SKIP_AFTER_FAILURES = 10;

  /** Where the tailer reads from. */
  interface Source {
    long currentTxid() throws IOException;

    EventBatchList editsFrom(long txid) throws IOException;
  }

  private final Source source;
  private final long pollMs;
  private final int costFactor;

  private long nextPollAt;
  private long backoffMs;
  private int hardFailures;
  private boolean loggedWaiting;

  /** A tailer that keeps every namespace event type (tests). */
  InotifyTailer(Source source, long pollMs, int maxPending, HookMetrics metrics) {
    this(source, pollMs, maxPending, 0, metrics);
    setFilter(java.util.EnumSet.range(NamespaceEvent.Type.CREATE, NamespaceEvent.Type.TRUNCATE),
        java.util.Collections.emptyList());
  }

  /**
   * @param costFactor if positive, after a read that took T ms the next read waits at least
   *     costFactor * T ms: getEditsFromTxid re-reads the in-progress edit log segment from its
   *     start on every call, so on a busy NameNode with a long segment an unthrottled tailer
   *     would spend a core scanning. With factor k it spends at most 1/k of one core.
   */
  InotifyTailer(Source source, long pollMs, int maxPending, int costFactor, HookMetrics metrics) {
    super(maxPending, metrics);
    this.costFactor = costFactor;
    this.source = source;
    this.pollMs = pollMs;
    this.backoffMs = pollMs;
  }

  static Source of(NamenodeProtocols rpc) {
    return new Source() {
      @Override
      public long currentTxid() throws IOException {
        return rpc.getCurrentEditLogTxid();
      }

      @Override
      public EventBatchList editsFrom(long txid) throws IOException {
        return rpc.getEditsFromTxid(txid);
      }
    };
  }

  /** Polls the edit log if it is time and there is room. Never throws. */
  @Override
  void maybePoll(long nowMs) {
    if (nowMs < nextPollAt || !hasRoom()) {
      return;
    }
    try {
      if (cursor < 0) {
        cursor = source.currentTxid();
        startAfter(cursor);
        LOG.info("newtricks: inotify tailer starts after txid {}", cursor);
        nextPollAt = nowMs + pollMs;
      } else if (!wantsAny()) {
        // Nothing subscribed: nothing to read; move on without scanning the edit log.
        cursor = Math.max(cursor, source.currentTxid());
        nextPollAt = nowMs + pollMs;
      } else {
        long start = System.nanoTime();
        EventBatchList el = source.editsFrom(cursor + 1);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        accept(el);
        nextPollAt = nowMs + Math.max(pollMs, costFactor * tookMs);
      }
      hardFailures = 0;
      loggedWaiting = false;
      backoffMs = pollMs;
    } catch (StandbyException | SafeModeException | RetriableException | IllegalStateException e) {
      // Standby, starting up, or edit log not open for write yet: wait quietly.
      if (!loggedWaiting) {
        LOG.info("newtricks: inotify tailer waiting for an active NameNode: {}", e.toString());
        loggedWaiting = true;
      }
      backOff(nowMs);
    } catch (Throwable t) {
      hardFailures++;
      LOG.warn("newtricks: inotify read from txid {} failed ({} in a row): {}",
          cursor + 1, hardFailures, t.toString());
      if (hardFailures >= SKIP_AFTER_FAILURES && cursor >= 0) {
        skipToCurrent();
      }
      backOff(nowMs);
    }
  }

  @Override
  protected void reposition(long txid) {
    super.reposition(txid);
    nextPollAt = 0;
  }

  private void backOff(long nowMs) {
    backoffMs = Math.min(Math.max(backoffMs * 2, pollMs), MAX_BACKOFF_MS);
    nextPollAt = nowMs + backoffMs;
  }

  /** The edits at the cursor are unreadable (purged?): log the gap and jump to the present. */
  private void skipToCurrent() {
    try {
      long cur = source.currentTxid();
      LOG.warn("newtricks: namespace events {}..{} are lost (edits unreadable); skipping ahead",
          cursor + 1, cur);
      metrics.namespaceGaps.incr();
      cursor = cur;
      hardFailures = 0;
    } catch (Throwable t) {
      LOG.debug("newtricks: getCurrentEditLogTxid", t);
    }
  }

  void accept(EventBatchList el) {
    if (el == null || el.getLastTxid() < 0) {
      return; // nothing new
    }
    if (el.getFirstTxid() != cursor + 1) {
      LOG.warn("newtricks: missing namespace events: wanted txid {}, edit log starts at {}",
          cursor + 1, el.getFirstTxid());
      metrics.namespaceGaps.incr();
    }
    for (EventBatch b : el.getBatches()) {
      for (Event e : b.getEvents()) {
        offer(b.getTxid(), e);
      }
    }
    cursor = el.getLastTxid();
  }

  /** inotify Event -> NamespaceEvent; null for types the co-process does not need. */
  static NamespaceEvent convert(long txid, Event e) {
    NamespaceEvent.Builder b = NamespaceEvent.newBuilder().setTxid(txid);
    switch (e.getEventType()) {
      case CREATE: {
        Event.CreateEvent c = (Event.CreateEvent) e;
        return b.setType(NamespaceEvent.Type.CREATE)
            .setPath(c.getPath())
            .setTimeMs(c.getCtime())
            .setIsDir(c.getiNodeType() == Event.CreateEvent.INodeType.DIRECTORY)
            .setReplication(Math.max(0, c.getReplication()))
            .setOwner(nz(c.getOwnerName()))
            .build();
      }
      case CLOSE: {
        Event.CloseEvent c = (Event.CloseEvent) e;
        return b.setType(NamespaceEvent.Type.CLOSE)
            .setPath(c.getPath())
            .setSize(c.getFileSize())
            .setTimeMs(c.getTimestamp())
            .build();
      }
      case APPEND:
        return b.setType(NamespaceEvent.Type.APPEND)
            .setPath(((Event.AppendEvent) e).getPath())
            .build();
      case RENAME: {
        Event.RenameEvent r = (Event.RenameEvent) e;
        return b.setType(NamespaceEvent.Type.RENAME)
            .setPath(r.getSrcPath())
            .setDstPath(r.getDstPath())
            .setTimeMs(r.getTimestamp())
            .build();
      }
      case METADATA: {
        Event.MetadataUpdateEvent m = (Event.MetadataUpdateEvent) e;
        b.setType(NamespaceEvent.Type.METADATA).setPath(m.getPath()).setTimeMs(m.getMtime());
        if (m.getMetadataType() == Event.MetadataUpdateEvent.MetadataType.REPLICATION) {
          b.setReplication(m.getReplication());
        }
        return b.build();
      }
      case UNLINK: {
        Event.UnlinkEvent u = (Event.UnlinkEvent) e;
        return b.setType(NamespaceEvent.Type.UNLINK)
            .setPath(u.getPath())
            .setTimeMs(u.getTimestamp())
            .build();
      }
      case TRUNCATE: {
        Event.TruncateEvent t = (Event.TruncateEvent) e;
        return b.setType(NamespaceEvent.Type.TRUNCATE)
            .setPath(t.getPath())
            .setSize(t.getFileSize())
            .setTimeMs(t.getTimestamp())
            .build();
      }
      default:
        return null;
    }
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
