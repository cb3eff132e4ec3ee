package io.newtricks.hadoop.supervise;

import io.grpc.ManagedChannel;
import io.newtricks.proto.v1.ConfigureResponse;

/**
 * What the event forwarder needs of a supervised co-process ({@link CoprocessSupervisor}; tests
 * use an in-JVM receiver).
 */
public interface CoprocessLink {
  /** True while a co-process is up, answered health checks and was configured. */
  boolean isHealthy();

  /** Increases with every successful (re)start; -1 before the first. */
  int generation();

  /** The channel to the current co-process; null while none is up. */
  ManagedChannel channel();

  /** The current co-process's answer to Configure; null before the first. */
  ConfigureResponse configureResponse();

  /**
   * A call to the current co-process (an EventSink/Deliver) was just answered: it is alive and
   * serving, so the supervisor need not send a health check of its own within the interval.
   */
  default void answered() {}
}
