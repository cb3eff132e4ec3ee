package io.newtricks.hadoop.host;

import java.util.function.LongSupplier;

/**
 * Holds a lock (the namesystem's read lock) in slices of at most {@code maxHoldNanos}: work that
 * runs long under it calls {@link #yieldIfDue} between its steps, which releases the lock and
 * takes it again once the slice is used up, so a waiting writer (and every RPC queued behind
 * it) goes first. The NameNode's lock is fair by default (dfs.namenode.fslock.fair), and even an
 * unfair ReentrantReadWriteLock makes a new reader wait behind a queued writer. A step itself is
 * never split: a slice lasts at most the bound plus one step.
 */
final class LockSlices implements AutoCloseable {
  /** The lock, as the NameNode's readLock()/readUnlock(opName). */
  interface Lock {
    void lock();

    void unlock();
  }

  private final Lock lock;
  private final long maxHoldNanos;
  private final LongSupplier clock;
  private long since;
  private int holds;
  private long longest;
  private boolean held;

  LockSlices(Lock lock, long maxHoldNanos, LongSupplier clock) {
    this.lock = lock;
    this.maxHoldNanos = maxHoldNanos;
    this.clock = clock;
  }

  /** Takes the lock (the first slice). */
  LockSlices open() {
    lock.lock();
    held = true;
    holds++;
    since = clock.getAsLong();
    return this;
  }

  /**
   * Between two steps: if this slice is used up, releases the lock and takes it again. True if
   * it did: whatever the caller read under the lock may have changed and must be read again.
   */
  boolean yieldIfDue() {
    long now = clock.getAsLong();
    if (now - since < maxHoldNanos) {
      return false;
    }
    longest = Math.max(longest, now - since);
    held = false;
    lock.unlock();
    lock.lock();
    held = true;
    holds++;
    since = clock.getAsLong();
    return true;
  }

  @Override
  public void close() {
    if (held) {
      longest = Math.max(longest, clock.getAsLong() - since);
      held = false;
      lock.unlock();
    }
  }

  /** How many times the lock was taken. */
  int holds() {
    return holds;
  }

  /** The longest slice so far, as the clock measured it. */
  long longestNanos() {
    return longest;
  }
}
