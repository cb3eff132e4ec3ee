package io.newtricks.hadoop.events;

import static org.junit.Assert.assertTrue;

import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * With something subscribed and nothing happening, the forwarder sleeps until an event is queued
 * (or a heartbeat is due) instead of looking every linger period; an event queued then is
 * delivered promptly, and events queued together still travel in one batch. Each cycle of the
 * forwarder asks the link whether the co-process is healthy, so those calls count its wake-ups.
 */
public class EventForwarderWakeTest {
  @Test
  public void idleSubscribedForwarderSleepsUntilAnEventIsQueued() throws Exception {
    List<EventBatch> received = new CopyOnWriteArrayList<>();
    AtomicInteger cycles = new AtomicInteger();
    EventHub hub = new EventHub();
    hub.configure(100);
    try (SinkFixture sink = new SinkFixture("nt-fwd-wake", b -> {
      received.add(b);
      return SinkFixture.ack().build();
    })) {
      FixedLink link = new FixedLink(sink.channel,
          EventFilter.newBuilder().addAuditCommands("open").build(), cycles::incrementAndGet);
      sink.startForwarder(hub, link, "test-fwd-wake");
      HookConf hc = sink.hookConf;
      long deadline = System.currentTimeMillis() + 5_000;
      while (!hub.wants("open") && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue("subscribed at Configure", hub.wants("open"));
      Thread.sleep(500);
      int before = cycles.get();
      Thread.sleep(3_000);
      int idle = cycles.get() - before;
      // Heartbeats come once a second; polling every linger period would be 3000 / linger.
      assertTrue("forwarder cycles in 3 s idle with a subscription: " + idle + " (linger "
          + hc.batchLingerMs + " ms)", idle <= 8);
      int batches = received.size();
      long t0 = System.nanoTime();
      for (int i = 0; i < 3; i++) {
        assertTrue(hub.offer(new AuditRecord("open", "/f" + i, null, "alice", null, true, 1, null)));
      }
      deadline = System.currentTimeMillis() + 5_000;
      while (audits(received) < 3 && System.currentTimeMillis() < deadline) {
        Thread.sleep(5);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue("3 queued opens delivered: " + audits(received), audits(received) == 3);
      assertTrue("delivered after " + ms + " ms", ms < 1_000);
      int withAudit = 0;
      for (EventBatch b : received.subList(batches, received.size())) {
        if (b.getEventsCount() > 0) {
          withAudit++;
        }
      }
      assertTrue("opens queued together went in " + withAudit + " batches", withAudit == 1);
      // Every acknowledged Deliver (heartbeats included) tells the supervisor the co-process
      // answered, so it can skip its own health check (the last ack may still be in flight).
      int answers = link.answers.get();
      assertTrue("answered Delivers reported: " + answers + " of " + received.size(),
          answers > 0 && answers >= received.size() - 1);
    }
  }

  private static int audits(List<EventBatch> batches) {
    int n = 0;
    for (EventBatch b : batches) {
      for (io.newtricks.proto.v1.Event e : b.getEventsList()) {
        if (e.hasAudit()) {
          n++;
        }
      }
    }
    return n;
  }
}
