package io.newtricks.hadoop;

import java.util.Collection;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bounded audit queue shared, per JVM, by the audit logger (created by FSNamesystem) and the
 * NameNodePlugin that drains it. Offering never blocks and never throws: a full queue drops the
 * record and counts it. Lock-free, because every audited call of every RPC handler goes through
 * {@link #offer}.
 */
final class EventHub {
  private static final EventHub INSTANCE = new EventHub();

  private final ConcurrentLinkedQueue<AuditRecord> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();
  private volatile int capacity = -1; // -1: not configured yet
  private volatile boolean closed;
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();

  EventHub() {}

  static EventHub get() {
    return INSTANCE;
  }

  /** Sizes the queue; the first call wins (audit logger and plugin read the same key). */
  synchronized void configure(int cap) {
    if (capacity < 0) {
      capacity = Math.max(1, cap);
    }
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
      dropped.incrementAndGet();
      return false;
    }
    queue.offer(r);
    accepted.incrementAndGet();
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
    closed = true;
    while (queue.poll() != null) {
      size.decrementAndGet();
    }
  }

  /** Accepts records again (a plugin with a co-process started). */
  void open() {
    closed = false;
  }

  long accepted() {
    return accepted.get();
  }

  long dropped() {
    return dropped.get();
  }
}
