package io.newtricks.hadoop.events;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets the event forwarder sleep while nothing is queued and be woken when something is. The
 * producers (the audit logger on an RPC handler thread, the event journal in the NameNode's
 * edit-log sync) call {@link #signal}: one volatile read when the forwarder is not waiting, and
 * otherwise {@link LockSupport#unpark}; it never waits for the forwarder or any lock the
 * forwarder holds.
 */
final class Wakeup {
  private volatile Thread waiter;

  /** {@link #signal} on {@code w} unless it is null (no forwarder started yet). Never blocks. */
  static void signal(Wakeup w) {
    if (w != null) {
      w.signal();
    }
  }

  /** Wakes the forwarder if it waits. Never blocks. */
  void signal() {
    Thread t = waiter;
    if (t != null) {
      waiter = null;
      LockSupport.unpark(t);
    }
  }

  /**
   * Parks the calling thread for at most {@code ms} unless {@code ready} holds once the thread
   * announced that it waits (a producer that queued before it would not see the announcement,
   * so it is checked after). Returns early on {@link #signal}, an interrupt or spuriously.
   */
  void await(long ms, BooleanSupplier ready) {
    if (ms <= 0) {
      return;
    }
    waiter = Thread.currentThread();
    try {
      if (!ready.getAsBoolean()) {
        LockSupport.parkNanos(this, ms * 1_000_000L);
      }
    } finally {
      waiter = null;
    }
  }
}
