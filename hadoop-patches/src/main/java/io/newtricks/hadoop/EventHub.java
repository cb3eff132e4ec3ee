package io.newtricks.hadoop;

import java.util.Collection;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bounded audit queue shared, per JVM, by the audit logger (created by FSNamesystem) and the
 * NameNodePlugin that drains it. Offering never blocks and never throws: a full queue drops the
 * record and counts it.
 */
final class EventHub {
  private static final EventHub INSTANCE = new EventHub();

  private volatile ArrayBlockingQueue<AuditRecord> queue;
  private volatile boolean closed;
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();

  EventHub() {}

  static EventHub get() {
    return INSTANCE;
  }

  /** Sizes the queue; the first call wins (audit logger and plugin read the same key). */
  synchronized void configure(int capacity) {
    if (queue == null) {
      queue = new ArrayBlockingQueue<>(Math.max(1, capacity));
    }
  }

  /** Adds a record unless the queue is full or closed. Never blocks. */
  boolean offer(AuditRecord r) {
    if (closed) {
      return false;
    }
    ArrayBlockingQueue<AuditRecord> q = queue;
    if (q == null) {
      configure(HookConf.DEFAULT_AUDIT_QUEUE_CAPACITY);
      q = queue;
    }
    if (q.offer(r)) {
      accepted.incrementAndGet();
      return true;
    }
    dropped.incrementAndGet();
    return false;
  }

  int drainTo(Collection<? super AuditRecord> out, int max) {
    ArrayBlockingQueue<AuditRecord> q = queue;
    return q == null || max <= 0 ? 0 : q.drainTo(out, max);
  }

  int size() {
    ArrayBlockingQueue<AuditRecord> q = queue;
    return q == null ? 0 : q.size();
  }

  /** Stops accepting and frees the queue: used when no co-process will ever drain it. */
  void close() {
    closed = true;
    ArrayBlockingQueue<AuditRecord> q = queue;
    if (q != null) {
      q.clear();
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
