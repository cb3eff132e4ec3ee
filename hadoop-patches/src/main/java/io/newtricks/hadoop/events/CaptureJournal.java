package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.Prewarm;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;
import org.apache.hadoop.hdfs.server.common.Storage;
import org.apache.hadoop.hdfs.server.common.StorageInfo;
import org.apache.hadoop.hdfs.server.namenode.EditLogInputStream;
import org.apache.hadoop.hdfs.server.namenode.EditLogOutputStream;
import org.apache.hadoop.hdfs.server.namenode.FSEditLogOp;
import org.apache.hadoop.hdfs.server.namenode.InotifyFSEditLogOpTranslator;
import org.apache.hadoop.hdfs.server.namenode.JournalManager;
import org.apache.hadoop.hdfs.server.protocol.NamespaceInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An edit-log journal that stores nothing: it sees every op as the NameNode writes it and hands
 * the subscribed namespace events (as inotify events, the same translation HDFS inotify uses)
 * to {@link EditCapture} once the op is synced. Configured by its subclass's name,
 * {@code io.newtricks.hadoop.EventJournal} (which keeps the name admins put in
 * {@code dfs.namenode.edits.journal-plugin.newtricks}, next to {@code newtricks:///events} in
 * {@code dfs.namenode.edits.dir}); the code is here, beside the capture it writes to.
 *
 * <p>It must never fail, block or slow the NameNode's own edit log, and it is not required
 * (never list it in dfs.namenode.edits.dir.required): {@link Stream#write} runs under
 * FSEditLog's lock on the thread that writes the edit, so it reads one volatile, skips every
 * op type nobody subscribed to, and catches everything; a flush offers one chunk to a bounded
 * lock-free queue. Were it to throw anyway, JournalSet disables a non-required journal and the
 * NameNode carries on with its own; the tailer then reads finalized segments instead.
 */
public abstract class CaptureJournal implements JournalManager {
  private static final Logger LOG = LoggerFactory.getLogger(CaptureJournal.class);

  private final EditCapture capture;
  private final boolean injectFailure;
  private final URI uri;

  /** The constructor FSEditLog calls (through the subclass, by reflection). */
  protected CaptureJournal(Configuration conf, URI uri, NamespaceInfo nsInfo) {
    this(conf, uri, EditCapture.get());
  }

  CaptureJournal(Configuration conf, URI uri, EditCapture capture) {
    this.uri = uri;
    this.capture = capture;
    this.injectFailure = conf.getBoolean(HookConf.JOURNAL_INJECT_FAILURE, false);
    // The NameNode is still loading its image: load the gRPC code meanwhile.
    Prewarm.start(conf, HookConf.NAMENODE_BINARY);
    boolean first = !capture.installed();
    capture.install(conf.getInt(HookConf.JOURNAL_QUEUE_CAPACITY, 65536));
    // Capture from the first edit of this run what the co-process subscribed to last time, so
    // a restarted NameNode streams its new segment without waiting for the co-process. An HA
    // NameNode makes the journal anew each time it becomes active: the forwarder's filter,
    // once it set one, stays.
    try {
      EventState st = first || !capture.subscribed().any()
          ? EventState.load(HookConf.stateFile(conf)) : null;
      if (st != null) {
        capture.select(EditCapture.Selection.of(st.types, st.prefixes));
      }
    } catch (Throwable t) {
      LOG.warn("newtricks: event state unreadable, capturing nothing until the co-process "
          + "subscribes: {}", t.toString());
    }
    LOG.info("newtricks: event journal {} installed", uri);
  }

  @Override
  public void format(NamespaceInfo ns, boolean force) {}

  @Override
  public boolean hasSomeData() {
    return false;
  }

  @Override
  public EditLogOutputStream startLogSegment(long txId, int layoutVersion) throws IOException {
    return new Stream(capture, injectFailure);
  }

  @Override
  public void finalizeLogSegment(long firstTxId, long lastTxId) {
    capture.finalized(lastTxId);
  }

  @Override
  public void setOutputBufferCapacity(int size) {}

  @Override
  public void recoverUnfinalizedSegments() {}

  @Override
  public void selectInputStreams(Collection<EditLogInputStream> streams, long fromTxId,
      boolean inProgressOk, boolean onlyDurableTxns) {
    // Stores nothing: the NameNode reads its edits from its real journals.
  }

  @Override
  public void purgeLogsOlderThan(long minTxIdToKeep) {}

  @Override
  public void doPreUpgrade() {}

  @Override
  public void doUpgrade(Storage storage) {}

  @Override
  public void doFinalize() {}

  @Override
  public boolean canRollBack(StorageInfo storage, StorageInfo prevStorage, int targetLayoutVersion) {
    return true;
  }

  @Override
  public void doRollback() {}

  @Override
  public void discardSegments(long startTxId) {}

  @Override
  public long getJournalCTime() {
    return 0;
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return "newtricks event journal " + uri;
  }

  /** The output stream of one segment. */
  static final class Stream extends EditLogOutputStream {
    private final EditCapture capture;
    private final boolean injectFailure;
    // Written by the edit-writing thread under FSEditLog's lock; swapped under this.
    private List<EditCapture.Captured> buf = EditCapture.newList();
    private long bufFrom = -1;
    private long bufTo = -1;
    private boolean bufComplete = true;
    private List<EditCapture.Captured> ready;
    private long readyFrom = -1;
    private long readyTo = -1;
    private boolean readyComplete = true;

    Stream(EditCapture capture, boolean injectFailure) throws IOException {
      this.capture = capture;
      this.injectFailure = injectFailure;
    }

    @Override
    public void write(FSEditLogOp op) throws IOException {
      if (injectFailure) {
        throw new IOException("newtricks event journal: injected failure ("
            + HookConf.JOURNAL_INJECT_FAILURE + ")");
      }
      try {
        long txid = op.getTransactionId();
        if (bufFrom < 0) {
          bufFrom = txid;
        } else if (txid != bufTo + 1) {
          bufComplete = false;
        }
        bufTo = txid;
        EditCapture.Selection s = capture.selection();
        if (!s.any()) {
          bufComplete = false; // nothing captured: the tailer must not take this range as read
          return;
        }
        if (!s.opcodes[op.opCode.getOpCode() & 0xff] || outsidePrefixes(op, s.prefixes)) {
          return;
        }
        EventBatch eb = InotifyFSEditLogOpTranslator.translate(op);
        if (eb == null) {
          return;
        }
        for (Event e : eb.getEvents()) {
          if (selected(s, e)) {
            buf.add(new EditCapture.Captured(txid, e));
          }
        }
      } catch (Throwable t) {
        bufComplete = false;
      }
    }

    @Override
    public void writeRaw(byte[] bytes, int offset, int length) {
      bufComplete = false; // only BackupNode streams write raw edits
    }

    @Override
    public void create(int layoutVersion) {}

    @Override
    public void close() {}

    @Override
    public void abort() {}

    @Override
    public synchronized void setReadyToFlush() {
      if (ready == null) {
        ready = buf;
        readyFrom = bufFrom;
        readyTo = bufTo;
        readyComplete = bufComplete;
      } else if (bufFrom >= 0) {
        ready.addAll(buf);
        readyComplete &= bufComplete && (readyTo < 0 || bufFrom == readyTo + 1);
        readyFrom = readyFrom < 0 ? bufFrom : readyFrom;
        readyTo = bufTo;
      }
      buf = EditCapture.newList();
      bufFrom = -1;
      bufTo = -1;
      bufComplete = true;
    }

    @Override
    protected void flushAndSync(boolean durable) {
      List<EditCapture.Captured> r;
      long from;
      long to;
      boolean complete;
      synchronized (this) {
        r = ready;
        from = readyFrom;
        to = readyTo;
        complete = readyComplete;
        ready = null;
      }
      try {
        if (r == null || from < 0) {
          return;
        }
        if (complete) {
          capture.publish(new EditCapture.Chunk(from, to, r));
        } else {
          capture.synced(to);
        }
      } catch (Throwable t) {
        // never fail the NameNode's sync
      }
    }

    @Override
    public boolean shouldForceSync() {
      return false;
    }
  }

  /** Off after the path reader could not be linked (a Hadoop whose FSEditLogOp differs). */
  private static volatile boolean pathPrefilter = true;

  /**
   * True if op names only paths outside the selected prefixes, read without translating it;
   * false when prefixes are empty (every path) or the op's paths cannot be read (the events
   * are then filtered after translation, see {@link #selected}).
   */
  static boolean outsidePrefixes(FSEditLogOp op, String[] prefixes) {
    if (prefixes.length == 0 || !pathPrefilter) {
      return false;
    }
    try {
      return !org.apache.hadoop.hdfs.server.namenode.NewtricksEditPaths.mayMatch(op, prefixes);
    } catch (LinkageError | RuntimeException e) {
      pathPrefilter = false;
      LOG.warn("newtricks: event journal filters paths after translation only: {}", e.toString());
      return false;
    }
  }

  /** Whether an inotify event is of a selected type and under a selected path. */
  static boolean selected(EditCapture.Selection s, Event e) {
    NamespaceEvent.Type t;
    String path;
    String dst = null;
    switch (e.getEventType()) {
      case CREATE:
        t = NamespaceEvent.Type.CREATE;
        path = ((Event.CreateEvent) e).getPath();
        break;
      case CLOSE:
        t = NamespaceEvent.Type.CLOSE;
        path = ((Event.CloseEvent) e).getPath();
        break;
      case APPEND:
        t = NamespaceEvent.Type.APPEND;
        path = ((Event.AppendEvent) e).getPath();
        break;
      case RENAME:
        t = NamespaceEvent.Type.RENAME;
        path = ((Event.RenameEvent) e).getSrcPath();
        dst = ((Event.RenameEvent) e).getDstPath();
        break;
      case METADATA:
        t = NamespaceEvent.Type.METADATA;
        path = ((Event.MetadataUpdateEvent) e).getPath();
        break;
      case UNLINK:
        t = NamespaceEvent.Type.UNLINK;
        path = ((Event.UnlinkEvent) e).getPath();
        break;
      case TRUNCATE:
        t = NamespaceEvent.Type.TRUNCATE;
        path = ((Event.TruncateEvent) e).getPath();
        break;
      default:
        return false;
    }
    boolean typeOk = false;
    for (NamespaceEvent.Type x : s.types) {
      if (x == t) {
        typeOk = true;
        break;
      }
    }
    if (!typeOk) {
      return false;
    }
    if (s.prefixes.length == 0) {
      return true;
    }
    for (String p : s.prefixes) {
      if ((path != null && path.startsWith(p)) || (dst != null && dst.startsWith(p))) {
        return true;
      }
    }
    return false;
  }
}
