package io.newtricks.hadoop.events;

import io.grpc.ManagedChannel;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.proto.v1.ConfigureResponse;
import io.newtricks.proto.v1.EventFilter;

/**
 * A CoprocessLink for tests: always healthy, generation 0, one channel, and a Configure answer
 * that subscribes to {@code filter}. {@code onHealthCheck} runs at every isHealthy call (the
 * forwarder asks once per loop).
 */
final class FixedLink implements CoprocessLink {
  private final ManagedChannel ch;
  private final EventFilter filter;
  private final Runnable onHealthCheck;
  /** Calls the forwarder reported answered (Deliver, heartbeats included). */
  final java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();

  FixedLink(ManagedChannel ch, EventFilter filter, Runnable onHealthCheck) {
    this.ch = ch;
    this.filter = filter;
    this.onHealthCheck = onHealthCheck;
  }

  @Override
  public boolean isHealthy() {
    onHealthCheck.run();
    return true;
  }

  @Override
  public int generation() {
    return 0;
  }

  @Override
  public ManagedChannel channel() {
    return ch;
  }

  @Override
  public void answered() {
    answers.incrementAndGet();
  }

  @Override
  public ConfigureResponse configureResponse() {
    return ConfigureResponse.newBuilder().setEvents(filter).build();
  }
}
