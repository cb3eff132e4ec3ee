package io.newtricks.hadoop.host;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A few threads that run the items of host-call batches (SetReplications' changes), bounded
 * both ways: at most {@code capacity} items are admitted at once (running or waiting for a
 * thread), and a batch that does not fit is refused whole, before any of it runs, with
 * RESOURCE_EXHAUSTED; and the host thread that submitted a batch waits for it at most
 * {@code timeoutMs}. An item still running then answers {@link Late#running}, its outcome
 * unknown (a thread inside the NameNode is never interrupted); an item that had not started is
 * withdrawn and answers {@link Late#notStarted}. A withdrawn item's slot is free at once; a
 * running item's only when it ends, so a NameNode that stopped making progress fills the pool
 * and further batches are refused instead of piling up.
 */
final class BatchPool {
  /** What a batch's items answer when the wait ends before they do. */
  interface Late<T> {
    T running(long waitedMs);

    T notStarted(long waitedMs);

    /** The item threw (the body is expected to answer every failure itself). */
    T failed(Throwable t);
  }

  private final ThreadPoolExecutor executor;
  private final Semaphore slots;
  private final int capacity;
  private final long timeoutNanos;
  private final String capacityKey;

  BatchPool(String name, int threads, int capacity, long timeoutMs, String capacityKey) {
    AtomicInteger n = new AtomicInteger();
    // The queue never holds more than capacity: admission takes a slot per item first.
    this.executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, name + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.executor.allowCoreThreadTimeOut(true);
    this.capacity = capacity;
    this.slots = new Semaphore(capacity);
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    this.capacityKey = capacityKey;
  }

  /** Items admitted now (running or waiting for a thread). */
  int inFlight() {
    return capacity - slots.availablePermits();
  }

  /** Stops the threads (items still running finish on their own). */
  void shutdown() {
    executor.shutdownNow();
  }

  /**
   * Runs every item, answers in order. Throws RESOURCE_EXHAUSTED (nothing ran) if the batch
   * does not fit now.
   */
  <T> List<T> runAll(List<Callable<T>> items, Late<T> late) throws InterruptedException {
    int n = items.size();
    if (n > capacity) {
      throw Status.RESOURCE_EXHAUSTED.withDescription(n + " items in one batch, more than the "
          + capacity + " the host admits at once (" + capacityKey + ")").asRuntimeException();
    }
    if (!slots.tryAcquire(n)) {
      throw Status.RESOURCE_EXHAUSTED.withDescription("host busy: " + inFlight() + " of "
          + capacity + " items of earlier batches still admitted (" + capacityKey
          + "); nothing of this batch was applied, try again later").asRuntimeException();
    }
    long start = System.nanoTime();
    List<Item<T>> jobs = new ArrayList<>(n);
    try {
      for (Callable<T> c : items) {
        Item<T> job = new Item<>(c, slots);
        jobs.add(job);
        executor.execute(job);
      }
    } catch (RuntimeException e) {
      // Rejected (shut down): withdraw what did not start; their slots come back.
      for (int i = jobs.size(); i < n; i++) {
        slots.release();
      }
      for (Item<T> job : jobs) {
        job.withdraw();
      }
      throw Status.UNAVAILABLE.withDescription("host shutting down").withCause(e)
          .asRuntimeException();
    }
    List<T> out = new ArrayList<>(n);
    for (Item<T> job : jobs) {
      long left = timeoutNanos - (System.nanoTime() - start);
      T r;
      try {
        if (left > 0) {
          r = job.done.get(left, TimeUnit.NANOSECONDS);
        } else if (job.done.isDone()) {
          r = job.done.get();
        } else {
          throw new TimeoutException();
        }
      } catch (TimeoutException e) {
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (job.withdraw()) {
          executor.remove(job);
          r = late.notStarted(waited);
        } else {
          r = late.running(waited);
        }
      } catch (ExecutionException e) {
        r = late.failed(e.getCause());
      }
      out.add(r);
    }
    return out;
  }

  /** One admitted item: runs once unless withdrawn first; frees its slot either way. */
  private static final class Item<T> implements Runnable {
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int WITHDRAWN = 2;
    private final Callable<T> body;
    private final Semaphore slots;
    private final AtomicInteger state = new AtomicInteger(QUEUED);
    final CompletableFuture<T> done = new CompletableFuture<>();

    Item(Callable<T> body, Semaphore slots) {
      this.body = body;
      this.slots = slots;
    }

    @Override
    public void run() {
      if (!state.compareAndSet(QUEUED, RUNNING)) {
        return; // withdrawn: its slot was freed then
      }
      try {
        done.complete(body.call());
      } catch (Throwable t) {
        done.completeExceptionally(t);
      } finally {
        slots.release();
      }
    }

    /** True if it had not started (and now never will). */
    boolean withdraw() {
      if (state.compareAndSet(QUEUED, WITHDRAWN)) {
        slots.release();
        return true;
      }
      return false;
    }
  }
}
