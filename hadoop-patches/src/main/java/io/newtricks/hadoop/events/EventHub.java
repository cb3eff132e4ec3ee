package io.newtricks.hadoop.events;

import io.newtricks.hadoop.supervise.HookConf;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;

/**
 * The bounded audit queue shared, per JVM, by the audit logger (created by FSNamesystem) and the
 * NameNodePlugin that drains it. Offering never blocks and never throws: a full queue drops the
 * record and counts it. Lock-free, because every audited call of every RPC handler goes through
 * {@link #wants} and, if wanted, {@link #offer}.
 *
 * <p>Nothing is queued unless a healthy co-process subscribed to the command: the audit logger
 * asks {@link #wants} at its first line, which reads one volatile array (empty while no
 * co-process is healthy or none subscribed) and allocates nothing.
 *
 * <p>Public for the audit logger ({@code io.newtricks.hadoop.AuditForwarder}, a configured name):
 * {@link #get}, {@link #configure(Configuration)}, {@link #wants}, {@link #countFiltered} and
 * {@link #admit}; the rest is the forwarder's.
 */
public final class EventHub {
  private static final String[] NONE = new String[0];
  private static final EventHub INSTANCE = new EventHub();

  private final ConcurrentLinkedQueue<AuditRecord> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();
  private volatile int capacity = -1; // -1: not configured yet
  private volatile boolean closed;
  /** Commands forwarded now: the subscription while a co-process is healthy, else none. */
  private volatile String[] active = NONE;
  private String[] subscribed = NONE; // guarded by this
  private boolean healthy;            // guarded by this
  // LongAdders: RPC handlers update them concurrently, and they are read only for metrics.
  private final LongAdder accepted = new LongAdder();
  private final LongAdder dropped = new LongAdder();
  private final LongAdder filtered = new LongAdder();
  // The audit repeat hold's counters (see AuditHold), kept across its tables.
  final LongAdder holdHeld = new LongAdder();
  final LongAdder holdReleased = new LongAdder();
  final LongAdder holdExpired = new LongAdder();
  final LongAdder holdOverflow = new LongAdder();
  /** The repeat hold of the subscription, or null: every subscribed record is queued. */
  private volatile AuditHold hold;
  private int holdMax = -1; // guarded by this; -1: not configured yet

  private volatile Wakeup wakeup;

  EventHub() {}

  /** The forwarder's wake-up, signalled after each queued record. */
  void setWakeup(Wakeup w) {
    wakeup = w;
  }

  public static EventHub get() {
    return INSTANCE;
  }

  /**
   * Sizes the audit queue and the repeat hold's table from conf (newtricks.audit.queue.capacity,
   * newtricks.events.audit.hold.max); the first call wins (audit logger and plugin read the same
   * keys).
   */
  public void configure(Configuration conf) {
    configure(conf.getInt(HookConf.AUDIT_QUEUE_CAPACITY, HookConf.DEFAULT_AUDIT_QUEUE_CAPACITY),
        conf.getInt(HookConf.AUDIT_HOLD_MAX, HookConf.DEFAULT_AUDIT_HOLD_MAX));
  }

  /** Sizes the queue; the first call wins (audit logger and plugin read the same key). */
  synchronized void configure(int cap) {
    configure(cap, HookConf.DEFAULT_AUDIT_HOLD_MAX);
  }

  /**
   * Sizes the queue and the repeat hold's table (pairs tracked at most; 0: none, every record
   * is queued); the first call wins.
   */
  synchronized void configure(int cap, int holdEntries) {
    if (capacity < 0) {
      capacity = Math.max(1, cap);
      holdMax = Math.max(0, holdEntries);
    }
  }

  /**
   * The audited commands the co-process subscribed to ("open", ...). Commands are compared with
   * String.equals; FSNamesystem passes literals, so the comparison is usually one identity check.
   */
  void subscribe(Collection<String> commands) {
    subscribe(commands, 0, 0);
  }

  /**
   * The subscription with its repeat hold (EventFilter.audit_min_repeats and
   * audit_repeat_window_ms): with minRepeats >= 2 and a window, a (cmd, src) pair's records are
   * held until the pair was audited minRepeats times within windowMs; otherwise every record
   * is queued. The same filter again keeps the table; another one discards what it held.
   */
  void subscribe(Collection<String> commands, int minRepeats, long windowMs) {
    AuditHold old;
    synchronized (this) {
      Set<String> s = new LinkedHashSet<>();
      for (String c : commands) {
        if (c != null && !c.isEmpty()) {
          s.add(c.intern());
        }
      }
      subscribed = s.toArray(NONE);
      old = hold;
      if (minRepeats >= 2 && windowMs > 0 && subscribed.length > 0) {
        int m = holdMax < 0 ? HookConf.DEFAULT_AUDIT_HOLD_MAX : holdMax;
        if (old == null || !old.sameAs(subscribed, minRepeats, windowMs, m)) {
          hold = new AuditHold(subscribed, minRepeats, windowMs, m, this);
        }
      } else {
        hold = null;
      }
      publish();
    }
    if (old != null && old != hold) {
      old.clear(); // outside the hub's lock: it takes each entry's lock
    }
  }

  /** Whether a co-process is healthy: while it is not, nothing is queued or held at all. */
  void setHealthy(boolean h) {
    AuditHold old = null;
    synchronized (this) {
      healthy = h;
      publish();
      if (!h) {
        // Nobody will read these soon; the co-process that comes back gets new ones.
        drainAway();
        old = hold;
      }
    }
    if (old != null) {
      old.clear(); // outside the hub's lock; the hold stays, empty
    }
  }

  private void publish() {
    active = healthy && !closed ? subscribed : NONE;
  }

  /** True if the command is forwarded now. Allocation-free; called on every audited call. */
  public boolean wants(String cmd) {
    String[] a = active;
    for (int i = 0; i < a.length; i++) {
      if (a[i] == cmd || a[i].equals(cmd)) {
        return true;
      }
    }
    return false;
  }

  /** Counts an audited call that was not forwarded (sampled by the caller, see AuditForwarder). */
  public void countFiltered() {
    filtered.increment();
  }

  /** How many commands are forwarded now (0 while no co-process is healthy). */
  int activeCount() {
    return active.length;
  }

  String[] activeCommands() {
    return active.clone();
  }

  /**
   * Takes an audited record of a subscribed command (the audit logger, on the RPC handler
   * thread): into the repeat hold if the subscription has one, else into the queue. Never
   * blocks.
   */
  public boolean admit(AuditRecord r) {
    AuditHold h = hold;
    return h == null ? offer(r) : h.admit(r);
  }

  /**
   * The forwarder thread's housekeeping of the repeat hold: drops pairs that can no longer
   * reach the count (at most every window/4; {@link #holdSweepDue} says when next).
   */
  void sweepHold(long now) {
    AuditHold h = hold;
    if (h != null) {
      h.sweep(now);
    }
  }

  /** When the repeat hold's next sweep is due (Long.MAX_VALUE: nothing held). */
  long holdSweepDue() {
    AuditHold h = hold;
    return h == null ? Long.MAX_VALUE : h.sweepDue();
  }

  /** Pairs the repeat hold tracks now. */
  int holdEntries() {
    AuditHold h = hold;
    return h == null ? 0 : h.entries();
  }

  /** Adds a record unless the queue is full or closed. Never blocks. */
  boolean offer(AuditRecord r) {
    if (closed) {
      return false;
    }
    int cap = capacity;
    if (cap < 0) {
      configure(HookConf.DEFAULT_AUDIT_QUEUE_CAPACITY);
      cap = capacity;
    }
    if (size.incrementAndGet() > cap) {
      size.decrementAndGet();
      dropped.increment();
      return false;
    }
    queue.offer(r);
    accepted.increment();
    Wakeup.signal(wakeup);
    return true;
  }

  int drainTo(Collection<? super AuditRecord> out, int max) {
    int n = 0;
    AuditRecord r;
    while (n < max && (r = queue.poll()) != null) {
      size.decrementAndGet();
      out.add(r);
      n++;
    }
    return n;
  }

  int size() {
    // The counter may overshoot by a few for an instant while a full queue rejects offers.
    return Math.max(0, Math.min(size.get(), capacity));
  }

  /** Stops accepting and frees the queue: used when no co-process will ever drain it. */
  void close() {
    AuditHold old;
    synchronized (this) {
      closed = true;
      publish();
      drainAway();
      old = hold;
    }
    if (old != null) {
      old.clear();
    }
  }

  private void drainAway() {
    while (queue.poll() != null) {
      size.decrementAndGet();
    }
  }

  /** Accepts records again (a plugin with a co-process started). */
  synchronized void open() {
    closed = false;
    publish();
  }

  long accepted() {
    return accepted.sum();
  }

  long dropped() {
    return dropped.sum();
  }

  long filtered() {
    return filtered.sum();
  }
}
