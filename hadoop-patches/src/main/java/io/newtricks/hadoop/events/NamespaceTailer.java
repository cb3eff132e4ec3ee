package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.NamespaceEvent;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.hdfs.inotify.Event;

/**
 * The namespace-event stream the {@link EventForwarder} sends: events read from the edit log
 * (by a subclass) wait in {@code queue}; once sent they are {@code retained} until the
 * co-process acknowledges them durable, so a restarted co-process gets them again without
 * re-reading the edit log. Only the subscribed types and paths are kept.
 *
 * <p>Not thread-safe: driven only by the forwarder thread. Reading stops while
 * {@code maxPending} events are queued; retention beyond that bound drops the oldest and, if a
 * restart needs them, the subclass re-reads the edit log from the durable txid instead.
 */
abstract class NamespaceTailer {
  protected final HookMetrics metrics;
  protected final int maxPending;
  private final ArrayDeque<NamespaceEvent> queue = new ArrayDeque<>();
  private final ArrayDeque<NamespaceEvent> retained = new ArrayDeque<>();
  private volatile Set<NamespaceEvent.Type> types = EnumSet.noneOf(NamespaceEvent.Type.class);
  private volatile String[] prefixes = new String[0];

  /** Every txid up to this one was read (queued, or not selected). -1: not positioned yet. */
  protected long cursor = -1;
  /** retained holds every selected event sent after this txid. */
  private long retainedFloor = -1;
  private long ackedTxid = -1;

  NamespaceTailer(int maxPending, HookMetrics metrics) {
    this.maxPending = Math.max(1, maxPending);
    this.metrics = metrics;
  }

  /** Reads more events if it is time and there is room. Never throws. */
  abstract void maybePoll(long nowMs);

  /** Lets the source of events wake the forwarder (a tailer that is polled: nothing to do). */
  void setWakeup(Wakeup w) {}

  /** Whether events arrived that {@link #maybePoll} has not taken yet. */
  boolean hasArrived() {
    return false;
  }

  /**
   * Until when the forwarder may wait for a {@link Wakeup} signal instead of calling
   * {@link #maybePoll} (a time in ms). This default (nowMs) keeps a polling tailer polled at the
   * forwarder's linger pace.
   */
  long idleUntil(long nowMs) {
    return nowMs;
  }

  /** Positions a tailer that has not read anything yet right after {@code txid}. */
  void startAfter(long txid) {
    if (cursor < 0 && txid >= 0) {
      cursor = txid;
      retainedFloor = txid;
    }
  }

  /** Which events to keep from now on. Empty types: none. Empty prefixes: every path. */
  void setFilter(Collection<NamespaceEvent.Type> t, List<String> p) {
    EnumSet<NamespaceEvent.Type> s = EnumSet.noneOf(NamespaceEvent.Type.class);
    for (NamespaceEvent.Type x : t) {
      if (x != null && x != NamespaceEvent.Type.TYPE_UNSPECIFIED && x != NamespaceEvent.Type.UNRECOGNIZED) {
        s.add(x);
      }
    }
    types = s;
    prefixes = p.toArray(new String[0]);
  }

  Set<NamespaceEvent.Type> types() {
    return types;
  }

  String[] prefixes() {
    return prefixes.clone();
  }

  boolean wantsAny() {
    return !types.isEmpty();
  }

  /** Keeps one inotify event read at txid if it is selected. */
  protected final void offer(long txid, Event e) {
    NamespaceEvent ne = InotifyTailer.convert(txid, e);
    if (ne == null || !selected(ne, types, prefixes)) {
      return;
    }
    queue.add(ne);
    metrics.pendingNamespaceEvents.set(outstanding());
  }

  static boolean selected(NamespaceEvent ne, Set<NamespaceEvent.Type> types, String[] prefixes) {
    if (!types.contains(ne.getType())) {
      return false;
    }
    if (prefixes.length == 0) {
      return true;
    }
    for (String p : prefixes) {
      if (ne.getPath().startsWith(p) || (!ne.getDstPath().isEmpty() && ne.getDstPath().startsWith(p))) {
        return true;
      }
    }
    return false;
  }

  /** Room to read more: stops the subclass from reading while the queue is full. */
  protected final boolean hasRoom() {
    return queue.size() < maxPending;
  }

  /** Moves up to {@code max} queued events into {@code out}; they are retained until durable. */
  int drainTo(Collection<NamespaceEvent> out, int max) {
    int n = 0;
    while (n < max && !queue.isEmpty()) {
      NamespaceEvent e = queue.poll();
      out.add(e);
      retained.add(e);
      n++;
    }
    while (retained.size() > maxPending) {
      retainedFloor = retained.poll().getTxid();
    }
    return n;
  }

  /**
   * The co-process accepted events up to {@code lastTxid} and made those up to
   * {@code durableTxid} durable.
   */
  void acknowledge(long lastTxid, long durableTxid) {
    while (!retained.isEmpty() && retained.peek().getTxid() <= durableTxid) {
      retained.poll();
    }
    if (durableTxid > retainedFloor) {
      retainedFloor = Math.min(durableTxid, cursor);
    }
    if (lastTxid > ackedTxid) {
      ackedTxid = lastTxid;
      metrics.lastAckedTxid.set(lastTxid);
    }
    metrics.pendingNamespaceEvents.set(outstanding());
  }

  /**
   * A new co-process: everything after {@code durableTxid} is sent again, from retention if it
   * holds all of it, else by re-reading the edit log from there.
   */
  void restartAfter(long durableTxid) {
    if (durableTxid < 0) {
      durableTxid = retainedFloor;
    }
    if (durableTxid >= retainedFloor && cursor >= 0) {
      ArrayDeque<NamespaceEvent> again = new ArrayDeque<>();
      for (NamespaceEvent e : retained) {
        if (e.getTxid() > durableTxid) {
          again.add(e);
        }
      }
      again.addAll(queue);
      queue.clear();
      queue.addAll(again);
    } else {
      queue.clear();
      reposition(durableTxid);
    }
    retained.clear();
    retainedFloor = Math.max(durableTxid, -1);
    metrics.pendingNamespaceEvents.set(outstanding());
  }

  /**
   * A new active term of an HA NameNode: drops everything read, sent or retained, and reads
   * again after {@code txid} (the position namenode-ext keeps in HDFS; -1: none, start from the
   * present), from the shared edit log.
   */
  void resumeAt(long txid) {
    queue.clear();
    retained.clear();
    reposition(txid < 0 ? -1 : txid);
    retainedFloor = txid < 0 ? -1 : txid;
    metrics.pendingNamespaceEvents.set(outstanding());
  }

  /** Drops what was read and reads again after txid. */
  protected void reposition(long txid) {
    cursor = txid;
  }

  /**
   * The txid after which the stream must resume if both processes restarted now: everything up
   * to it is durable at the co-process or was not selected.
   */
  long safeTxid() {
    NamespaceEvent first = !retained.isEmpty() ? retained.peek() : queue.peek();
    if (first == null) {
      return cursor;
    }
    return Math.min(cursor, first.getTxid() - 1);
  }

  boolean hasQueued() {
    return !queue.isEmpty();
  }

  long lastReadTxid() {
    return cursor;
  }

  long ackedTxid() {
    return ackedTxid;
  }

  int outstanding() {
    return queue.size() + retained.size();
  }
}
