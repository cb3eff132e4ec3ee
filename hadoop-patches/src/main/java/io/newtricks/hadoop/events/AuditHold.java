package io.newtricks.hadoop.events;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The audit repeat hold (EventFilter.audit_min_repeats): an audited record of a (cmd, src) pair
 * is forwarded only once the pair has been audited {@link #minRepeats} times within
 * {@link #windowMs}; until then its records wait here. The record that completes the count
 * releases the held ones into the {@link EventHub} queue, oldest first, then goes itself; after
 * that the pair's records go straight to the queue while each arrives within the window of the
 * previous one. A consumer that acts only on repeated calls (reactive hints: K clients opening
 * one file within W) so sees every call it could act on, and the files opened once (most of a
 * NameNode's opens) cost the co-process nothing.
 *
 * <p>{@link #admit} runs on the RPC handler thread: one map lookup (one map per held command,
 * keyed by src, so no key is built) and a lock on that pair's entry only; it never waits for
 * anything else. The table is bounded ({@code newtricks.events.audit.hold.max} entries): when
 * it is full, records of pairs it does not track are forwarded directly (and counted), so a
 * consumer loses nothing. Entries whose last record is older than the window (plus
 * {@link #SWEEP_GRACE_MS}) are dropped by {@link #sweep}, called by the forwarder thread, at
 * most every window/4.
 */
final class AuditHold {
  /**
   * Extra age before the sweep drops an entry: a record's time is taken on the RPC handler
   * thread a moment before it is admitted, so one stamped within the window of an entry's last
   * record may be admitted just after the window passed by the clock.
   */
  static final long SWEEP_GRACE_MS = 1_000;

  final int minRepeats;
  final long windowMs;
  private final String[] commands;
  private final ConcurrentHashMap<String, Entry>[] tables;
  private final int max;
  private final EventHub hub;
  private final AtomicInteger entries = new AtomicInteger();
  private volatile long nextSweepAt;

  /** One (cmd, src) pair. Guarded by itself. */
  private static final class Entry {
    AuditRecord[] held = new AuditRecord[2];
    int count;
    long last = Long.MIN_VALUE; // time of the pair's latest record
    boolean repeating;         // reached minRepeats: records go straight to the queue
    boolean removed;           // dropped by the sweep: admit into a new entry
  }

  @SuppressWarnings("unchecked")
  AuditHold(String[] commands, int minRepeats, long windowMs, int max, EventHub hub) {
    this.commands = commands.clone();
    this.minRepeats = minRepeats;
    this.windowMs = windowMs;
    this.max = Math.max(0, max);
    this.hub = hub;
    this.tables = new ConcurrentHashMap[commands.length];
    for (int i = 0; i < tables.length; i++) {
      tables[i] = new ConcurrentHashMap<>();
    }
  }

  /** Whether this hold applies the same filter (then a re-sent filter keeps the table). */
  boolean sameAs(String[] cmds, int n, long w, int m) {
    return n == minRepeats && w == windowMs && m == max && Arrays.equals(cmds, commands);
  }

  /**
   * Holds or queues one record (the RPC handler thread). Returns false only if the queue
   * dropped a record it offered.
   */
  boolean admit(AuditRecord r) {
    ConcurrentHashMap<String, Entry> t = table(r.cmd);
    if (t == null || r.src == null) {
      return hub.offer(r);
    }
    for (;;) {
      Entry e = t.get(r.src);
      if (e == null) {
        if (entries.incrementAndGet() > max) {
          entries.decrementAndGet();
          hub.holdOverflow.increment();
          return hub.offer(r);
        }
        Entry created = new Entry();
        e = t.putIfAbsent(r.src, created);
        if (e == null) {
          e = created;
        } else {
          entries.decrementAndGet();
        }
      }
      synchronized (e) {
        if (!e.removed) {
          return admitLocked(e, r);
        }
      }
    }
  }

  private boolean admitLocked(Entry e, AuditRecord r) {
    long t = r.timeMs;
    if (e.repeating) {
      if (t - e.last <= windowMs) {
        e.last = Math.max(e.last, t);
        return hub.offer(r);
      }
      e.repeating = false; // a gap longer than the window: count again
    }
    // Held records outside the window of this one can never be part of minRepeats with it or
    // a later one.
    int kept = 0;
    for (int i = 0; i < e.count; i++) {
      AuditRecord h = e.held[i];
      if (t - h.timeMs <= windowMs) {
        e.held[kept++] = h;
      }
    }
    if (kept < e.count) {
      hub.holdExpired.add(e.count - kept);
      Arrays.fill(e.held, kept, e.count, null);
      e.count = kept;
    }
    if (e.count + 1 >= minRepeats) {
      boolean ok = true;
      for (int i = 0; i < e.count; i++) {
        ok &= hub.offer(e.held[i]);
        e.held[i] = null;
      }
      hub.holdReleased.add(e.count);
      e.count = 0;
      if (e.held.length > 2) {
        e.held = new AuditRecord[2];
      }
      e.repeating = true;
      e.last = Math.max(e.last, t);
      return hub.offer(r) & ok;
    }
    if (e.count == e.held.length) {
      e.held = Arrays.copyOf(e.held, Math.min(minRepeats - 1, e.held.length * 2));
    }
    e.held[e.count++] = r;
    e.last = Math.max(e.last, t);
    hub.holdHeld.increment();
    return true;
  }

  private ConcurrentHashMap<String, Entry> table(String cmd) {
    String[] c = commands;
    for (int i = 0; i < c.length; i++) {
      if (c[i] == cmd || c[i].equals(cmd)) {
        return tables[i];
      }
    }
    return null;
  }

  /** When the next sweep is due (Long.MAX_VALUE: the table is empty, nothing to sweep). */
  long sweepDue() {
    return entries.get() == 0 ? Long.MAX_VALUE : nextSweepAt;
  }

  /**
   * Drops the entries whose last record is older than the window (plus the grace): no later
   * record can bring them to minRepeats. The forwarder thread only; does the work at most
   * every window/4.
   */
  void sweep(long now) {
    if (now < nextSweepAt) {
      return;
    }
    nextSweepAt = now + Math.max(1, windowMs / 4);
    for (ConcurrentHashMap<String, Entry> t : tables) {
      Iterator<Map.Entry<String, Entry>> it = t.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<String, Entry> me = it.next();
        Entry e = me.getValue();
        synchronized (e) {
          if (now - e.last > windowMs + SWEEP_GRACE_MS) {
            drop(e);
            t.remove(me.getKey(), e);
          }
        }
      }
    }
  }

  /**
   * Discards every held record (the co-process went away, or the filter changed); the hold
   * stays usable.
   */
  void clear() {
    for (ConcurrentHashMap<String, Entry> t : tables) {
      for (Map.Entry<String, Entry> me : t.entrySet()) {
        Entry e = me.getValue();
        synchronized (e) {
          if (!e.removed) {
            drop(e);
            t.remove(me.getKey(), e);
          }
        }
      }
    }
  }

  private void drop(Entry e) {
    e.removed = true;
    hub.holdExpired.add(e.count);
    Arrays.fill(e.held, 0, e.count, null);
    e.count = 0;
    entries.decrementAndGet();
  }

  /** Pairs tracked now. */
  int entries() {
    return entries.get();
  }
}
