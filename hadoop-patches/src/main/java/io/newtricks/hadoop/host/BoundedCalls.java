package io.newtricks.hadoop.host;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.internal.SerializingExecutor;
import io.newtricks.hadoop.supervise.HookConf;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission control for the host service: at most {@code limit} calls are admitted at once
 * (running on the executor's threads or waiting for one); a call beyond that is closed at once
 * with RESOURCE_EXHAUSTED on the transport thread, so the daemon never queues unbounded work
 * for its co-process. The server runs with directExecutor: this interceptor moves each admitted
 * call's callbacks onto the executor, serialized per call as gRPC requires.
 */
final class BoundedCalls implements ServerInterceptor {
  private final Executor executor;
  private final int limit;
  private final AtomicInteger admitted = new AtomicInteger();

  BoundedCalls(Executor executor, int limit) {
    this.executor = executor;
    this.limit = Math.max(1, limit);
  }

  int admitted() {
    return admitted.get();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (admitted.incrementAndGet() > limit) {
      admitted.decrementAndGet();
      call.close(Status.RESOURCE_EXHAUSTED.withDescription("newtricks host service busy: "
          + limit + " calls in progress (" + HookConf.HOST_HANDLERS + " + " + HookConf.HOST_QUEUE
          + ")"), new Metadata());
      return new ServerCall.Listener<Q>() {};
    }
    SerializingExecutor serial = new SerializingExecutor(executor);
    Released released = new Released();
    ServerCall.Listener<Q> delegate;
    try {
      delegate = next.startCall(call, headers);
    } catch (RuntimeException e) {
      released.release();
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(delegate) {
      @Override
      public void onMessage(Q message) {
        serial.execute(() -> delegate().onMessage(message));
      }

      @Override
      public void onHalfClose() {
        serial.execute(() -> delegate().onHalfClose());
      }

      @Override
      public void onReady() {
        serial.execute(() -> delegate().onReady());
      }

      @Override
      public void onCancel() {
        serial.execute(() -> {
          try {
            delegate().onCancel();
          } finally {
            released.release();
          }
        });
      }

      @Override
      public void onComplete() {
        serial.execute(() -> {
          try {
            delegate().onComplete();
          } finally {
            released.release();
          }
        });
      }
    };
  }

  /** Releases the call's slot once, whichever of onComplete/onCancel comes. */
  private final class Released {
    private final java.util.concurrent.atomic.AtomicBoolean done =
        new java.util.concurrent.atomic.AtomicBoolean();

    void release() {
      if (done.compareAndSet(false, true)) {
        admitted.decrementAndGet();
      }
    }
  }
}
