package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
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
    AtomicReference<EventFilter> changed = new AtomicReference<>();
    List<EventBatch> received = new CopyOnWriteArrayList<>();
    EventHub hub = new EventHub();
    hub.configure(100);
    try (SinkFixture sink = new SinkFixture("nt-fwd-filter", b -> {
      received.add(b);
      DeliverAck.Builder ack = SinkFixture.ack();
      EventFilter f = changed.getAndSet(null);
      if (f != null) {
        ack.setFilter(f);
      }
      return ack.build();
    })) {
      sink.startForwarder(hub, new FixedLink(sink.channel, EventFilter.getDefaultInstance(), () -> { }),
          "test-fwd-filter");
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
