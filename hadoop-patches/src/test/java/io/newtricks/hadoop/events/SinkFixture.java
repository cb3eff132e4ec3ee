package io.newtricks.hadoop.events;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.hadoop.supervise.UnixSockets;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventSinkGrpc;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;

/**
 * For forwarder tests: an EventSink gRPC server on a Unix socket in a temporary directory that
 * answers each delivered batch with {@code deliver}'s acknowledgement, a channel to it, and a
 * forwarder (no namespace tailer) started on it; {@link #close} stops and removes them all.
 */
final class SinkFixture implements AutoCloseable {
  final File dir;
  final ManagedChannel channel;
  private final Server server;
  private EventForwarder forwarder;
  HookConf hookConf;

  SinkFixture(String prefix, Function<EventBatch, DeliverAck> deliver) throws IOException {
    dir = Files.createTempDirectory(prefix).toFile();
    server = UnixSockets.server(socket().getPath()).directExecutor()
        .addService(new EventSinkGrpc.EventSinkImplBase() {
          @Override
          public void deliver(EventBatch b, StreamObserver<DeliverAck> out) {
            out.onNext(deliver.apply(b));
            out.onCompleted();
          }
        }).build().start();
    channel = UnixSockets.channel("unix", socket().getPath());
  }

  /** What namenode-ext answers when nothing is durable yet and the filter did not change. */
  static DeliverAck.Builder ack() {
    return DeliverAck.newBuilder().setLastTxid(-1).setDurableTxid(-1);
  }

  /** Starts a forwarder from hub to this sink through link, its state file in the directory. */
  EventForwarder startForwarder(EventHub hub, CoprocessLink link, String metricsName) {
    Configuration conf = new Configuration(false);
    conf.set(HookConf.STATE_FILE, stateFile().getPath());
    hookConf = new HookConf(conf, HookConf.NAMENODE_BINARY);
    forwarder = new EventForwarder(hub, null, link, new HookMetrics(metricsName), hookConf);
    forwarder.start();
    return forwarder;
  }

  private File socket() {
    return new File(dir, "s.sock");
  }

  private File stateFile() {
    return new File(dir, "state.properties");
  }

  @Override
  public void close() {
    if (forwarder != null) {
      forwarder.stop();
    }
    channel.shutdownNow();
    server.shutdownNow();
    socket().delete();
    stateFile().delete();
    dir.delete();
  }
}
