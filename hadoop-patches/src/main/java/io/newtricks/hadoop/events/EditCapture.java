package io.newtricks.hadoop.events;

import io.newtricks.proto.v1.NamespaceEvent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.server.namenode.FSEditLogOpCodes;

/**
 * Hands the namespace events the event journal ({@link CaptureJournal}) captures as the
 * NameNode writes its edit log over to the {@link JournalTailer}, per JVM (FSEditLog creates the
 * journal, the plugin reads it).
 *
 * <p>The journal publishes one {@link Chunk} per edit-log flush: the contiguous txid range it
 * saw written and synced, with the selected events in it. The queue is bounded by events and
 * never blocks: when it is full the chunk is dropped and counted, and capture pauses until the
 * tailer has drained the queue; the tailer sees the hole in the txid ranges and reads it from
 * finalized edit-log segments instead.
 */
final class EditCapture {
  private static final EditCapture INSTANCE = new EditCapture();

  /** Events captured at one txid. */
  static final class Captured {
    final long txid;
    final Event event;

    Captured(long txid, Event event) {
      this.txid = txid;
      this.event = event;
    }
  }

  /** The ops of one flush: every txid in [from, to] was written, these events selected. */
  static final class Chunk {
    final long from;
    final long to;
    final List<Captured> events;

    Chunk(long from, long to, List<Captured> events) {
      this.from = from;
      this.to = to;
      this.events = events;
    }
  }

  /** What to capture; immutable, swapped as a whole. */
  static final class Selection {
    static final Selection NONE = new Selection(new boolean[256], new NamespaceEvent.Type[0],
        new String[0]);

    final boolean[] opcodes; // by FSEditLogOpCodes byte: ops that can yield a selected event
    final NamespaceEvent.Type[] types;
    final String[] prefixes;

    Selection(boolean[] opcodes, NamespaceEvent.Type[] types, String[] prefixes) {
      this.opcodes = opcodes;
      this.types = types;
      this.prefixes = prefixes;
    }

    boolean any() {
      return types.length > 0;
    }

    static Selection of(Collection<NamespaceEvent.Type> types, Collection<String> prefixes) {
      boolean[] ops = new boolean[256];
      for (NamespaceEvent.Type t : types) {
        for (FSEditLogOpCodes c : opcodesOf(t)) {
          ops[c.getOpCode() & 0xff] = true;
        }
      }
      return new Selection(ops, types.toArray(new NamespaceEvent.Type[0]),
          prefixes.toArray(new String[0]));
    }

    /** The edit-log ops InotifyFSEditLogOpTranslator turns into events of type t. */
    static FSEditLogOpCodes[] opcodesOf(NamespaceEvent.Type t) {
      switch (t) {
        case CREATE:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_ADD, FSEditLogOpCodes.OP_MKDIR,
              FSEditLogOpCodes.OP_SYMLINK};
        case CLOSE:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_CLOSE};
        case APPEND:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_ADD, FSEditLogOpCodes.OP_APPEND};
        case RENAME:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_RENAME_OLD,
              FSEditLogOpCodes.OP_RENAME, FSEditLogOpCodes.OP_CONCAT_DELETE};
        case UNLINK:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_DELETE,
              FSEditLogOpCodes.OP_CONCAT_DELETE};
        case TRUNCATE:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_TRUNCATE};
        case METADATA:
          return new FSEditLogOpCodes[] {FSEditLogOpCodes.OP_SET_REPLICATION,
              FSEditLogOpCodes.OP_SET_PERMISSIONS, FSEditLogOpCodes.OP_SET_OWNER,
              FSEditLogOpCodes.OP_TIMES, FSEditLogOpCodes.OP_SET_ACL,
              FSEditLogOpCodes.OP_SET_XATTR, FSEditLogOpCodes.OP_REMOVE_XATTR,
              FSEditLogOpCodes.OP_CONCAT_DELETE};
        default:
          return new FSEditLogOpCodes[0];
      }
    }
  }

  private final ConcurrentLinkedQueue<Chunk> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private volatile int capacity = 65536;
  private volatile Selection selection = Selection.NONE;
  private volatile boolean installed;
  private volatile boolean paused; // after an overflow, until the tailer drained the queue
  private volatile long lastSyncedTxid = -1;
  private volatile long lastFinalizedTxid = -1;
  final LongAdder captured = new LongAdder();
  final LongAdder droppedChunks = new LongAdder();

  private volatile Wakeup wakeup;

  EditCapture() {}

  /** The forwarder's wake-up, signalled after each flush the journal reports. */
  void setWakeup(Wakeup w) {
    wakeup = w;
  }

  private void wake() {
    Wakeup.signal(wakeup);
  }

  static EditCapture get() {
    return INSTANCE;
  }

  /** A journal was created in this JVM: the NameNode writes its edits through it. */
  void install(int cap) {
    capacity = Math.max(1, cap);
    installed = true;
  }

  boolean installed() {
    return installed;
  }

  void select(Selection s) {
    selection = s;
  }

  /** What to capture now; NONE when nothing is subscribed or capture is paused. */
  Selection selection() {
    return paused ? Selection.NONE : selection;
  }

  Selection subscribed() {
    return selection;
  }

  /** Called by the journal after a flush. Never blocks. */
  void publish(Chunk c) {
    lastSyncedTxid = Math.max(lastSyncedTxid, c.to);
    int n = Math.max(1, c.events.size());
    if (queued.addAndGet(n) > capacity) {
      queued.addAndGet(-n);
      droppedChunks.increment();
      paused = true;
      wake();
      return;
    }
    queue.offer(c);
    captured.add(c.events.size());
    wake();
  }

  /** The first unread chunk, or null. */
  Chunk peek() {
    return queue.peek();
  }

  void pop() {
    Chunk c = queue.poll();
    if (c != null) {
      queued.addAndGet(-Math.max(1, c.events.size()));
    }
    if (paused && queue.isEmpty()) {
      paused = false;
    }
  }

  /**
   * Resumes capture if the queue is empty: pop() does that too, but an overflow racing with the
   * pop that emptied the queue could leave capture paused with nothing left to pop.
   */
  void resumeIfDrained() {
    if (paused && queue.isEmpty()) {
      paused = false;
    }
  }

  /** Drops everything queued (the tailer restarts from the edit log). */
  void clear() {
    while (queue.peek() != null) {
      pop();
    }
  }

  boolean isPaused() {
    return paused;
  }

  int queued() {
    return queued.get();
  }

  void synced(long txid) {
    lastSyncedTxid = Math.max(lastSyncedTxid, txid);
    wake();
  }

  long lastSyncedTxid() {
    return lastSyncedTxid;
  }

  void finalized(long lastTxid) {
    lastFinalizedTxid = Math.max(lastFinalizedTxid, lastTxid);
  }

  long lastFinalizedTxid() {
    return lastFinalizedTxid;
  }

  static List<Captured> newList() {
    return new ArrayList<>(4);
  }
}
