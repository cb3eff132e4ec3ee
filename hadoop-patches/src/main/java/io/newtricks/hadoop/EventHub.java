package io.newtricks.hadoop;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bounded audit queue shared, per JVM, by the audit logger (created by FSNamesystem) and the
 * NameNodePlugin that drains it. Offering never blocks and never throws: a full queue drops the
 * record and counts it. Lock-free, because every audited call of every RPC handler goes through
 * {@link #wants} and, if wanted, {@link #offer}.
 *
 * <p>Nothing is queued unless a healthy co-process subscribed to the command: the audit logger
 * asks {@link #wants} at its first line, which reads one volatile array (empty while no
 * co-process is healthy or none subscribed) and allocates nothing.
 */
final class EventHub {
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

  private volatile Wakeup wakeup;

  EventHub() {}

  /** The forwarder's wake-up, signalled after each queued record. */
  void setWakeup(Wakeup w) {
    wakeup = w;
  }

  static EventHub get() {
    return INSTANCE;
  }

  /** Sizes the queue; the first call wins (audit logger and plugin read the same key). */
  synchronized void configure(int cap) {
    if (capacity < 0) {
      capacity = Math.max(1, cap);
    }
  }

  /**
   * The audited commands the co-process subscribed to ("open", ...). Commands are compared with
   * String.equals; FSNamesystem passes literals, so the comparison is usually one identity check.
   */
  synchronized void subscribe(Collection<String> commands) {
    Set<String> s = new LinkedHashSet<>();
    for (String c : commands) {
      if (c != null && !c.isEmpty()) {
        s.add(c.intern());
      }
    }
    subscribed = s.toArray(NONE);
    publish();
  }

  /** Whether a co-process is healthy: while it is not, nothing is queued at all. */
  synchronized void setHealthy(boolean h) {
    healthy = h;
    publish();
    if (!h) {
      // Nobody will read these soon; the co-process that comes back gets new ones.
      drainAway();
    }
  }

  private void publish() {
    active = healthy && !closed ? subscribed : NONE;
  }

  /** True if the command is forwarded now. Allocation-free; called on every audited call. */
  boolean wants(String cmd) {
    String[] a = active;
    for (int i = 0; i < a.length; i++) {
      if (a[i] == cmd || a[i].equals(cmd)) {
        return true;
      }
    }
    return false;
  }

  /** Counts an audited call that was not forwarded (sampled by the caller, see AuditForwarder). */
  void countFiltered() {
    filtered.increment();
  }

  /** How many commands are forwarded now (0 while no co-process is healthy). */
  int activeCount() {
    return active.length;
  }

  String[] activeCommands() {
    return active.clone();
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
    Wakeup w = wakeup;
    if (w != null) {
      w.signal();
    }
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
  synchronized void close() {
    closed = true;
    publish();
    drainAway();
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
