package io.newtricks.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import io.newtricks.proto.v1.EventSinkGrpc;
import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/**
 * A subscription the co-process makes after Configure reaches the hook although nothing was
 * subscribed before (so nothing was being delivered whose acknowledgement could carry it).
 * The receiver here answers like namenode-ext's sink: the filter only in the first
 * acknowledgement after it changed.
 */
public class EventForwarderFilterTest {
  @Test
  public void subscriptionAfterConfigureArrivesWithoutTraffic() throws Exception {
    File dir = Files.createTempDirectory("nt-fwd-filter").toFile();
    File sock = new File(dir, "s.sock");
    AtomicReference<EventFilter> changed = new AtomicReference<>();
    List<EventBatch> received = new CopyOnWriteArrayList<>();
    Server server = UnixSockets.server(sock.getPath()).directExecutor()
        .addService(new EventSinkGrpc.EventSinkImplBase() {
          @Override
          public void deliver(EventBatch b, StreamObserver<DeliverAck> out) {
            received.add(b);
            DeliverAck.Builder ack = DeliverAck.newBuilder().setLastTxid(-1).setDurableTxid(-1);
            EventFilter f = changed.getAndSet(null);
            if (f != null) {
              ack.setFilter(f);
            }
            out.onNext(ack.build());
            out.onCompleted();
          }
        }).build().start();
    ManagedChannel ch = UnixSockets.channel("unix", sock.getPath());
    CoprocessLink link = new FixedLink(ch, EventFilter.getDefaultInstance(), () -> { });
    Configuration conf = new Configuration(false);
    conf.set(HookConf.STATE_FILE, new File(dir, "state.properties").getPath());
    EventHub hub = new EventHub();
    hub.configure(100);
    EventForwarder fwd = new EventForwarder(hub, null, link, new HookMetrics("test-fwd-filter"),
        new HookConf(conf, HookConf.NAMENODE_BINARY));
    fwd.start();
    try {
      Thread.sleep(300);
      assertFalse("nothing subscribed at Configure", hub.wants("open"));
      changed.set(EventFilter.newBuilder().addAuditCommands("open").build());
      long deadline = System.currentTimeMillis() + 5_000;
      while (!hub.wants("open") && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue("a subscription made after Configure never reached the hook", hub.wants("open"));
      // ... and is served: an audited open is forwarded.
      assertTrue(hub.offer(new AuditRecord("open", "/f", null, "alice", null, true, 1, null)));
      deadline = System.currentTimeMillis() + 5_000;
      while (!hasAudit(received) && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue("the subscribed audit event was not delivered", hasAudit(received));
      // Heartbeats are at most about one a second.
      int before = received.size();
      Thread.sleep(2_500);
      int beats = received.size() - before;
      assertTrue("heartbeats in 2.5 s: " + beats, beats >= 1 && beats <= 4);
      // Withdrawing the subscription travels the same way.
      changed.set(EventFilter.getDefaultInstance());
      deadline = System.currentTimeMillis() + 5_000;
      while (hub.wants("open") && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertFalse("withdrawn subscription still forwarded", hub.wants("open"));
      assertEquals(0, hub.size());
    } finally {
      fwd.stop();
      ch.shutdownNow();
      server.shutdownNow();
      sock.delete();
      new File(dir, "state.properties").delete();
      dir.delete();
    }
  }

  private static boolean hasAudit(List<EventBatch> batches) {
    for (EventBatch b : batches) {
      for (io.newtricks.proto.v1.Event e : b.getEventsList()) {
        if (e.hasAudit() && e.getAudit().getCmd().equals("open")) {
          return true;
        }
      }
    }
    return false;
  }
}
