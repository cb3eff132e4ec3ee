package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

public class EventHubTest {
  private static AuditRecord rec(int i) {
    return new AuditRecord("open", "/f" + i, null, "alice", null, true, i, null);
  }

  @Test
  public void dropsAndCountsWhenFull() {
    EventHub hub = new EventHub();
    hub.configure(3);
    for (int i = 0; i < 5; i++) {
      hub.offer(rec(i));
    }
    assertEquals(3, hub.accepted());
    assertEquals(2, hub.dropped());
    List<AuditRecord> out = new ArrayList<>();
    assertEquals(2, hub.drainTo(out, 2));
    assertEquals("/f0", out.get(0).src);
    assertTrue(hub.offer(rec(9)));
    assertEquals(2, hub.size());
  }

  @Test
  public void closedHubAcceptsNothing() {
    EventHub hub = new EventHub();
    hub.configure(3);
    hub.offer(rec(1));
    hub.close();
    assertFalse(hub.offer(rec(2)));
    assertEquals(0, hub.size());
    hub.open();
    assertTrue(hub.offer(rec(3)));
  }

  @Test
  public void forwardsOnlySubscribedCommandsWhileHealthy() {
    EventHub hub = new EventHub();
    hub.configure(10);
    hub.subscribe(java.util.Arrays.asList(new String("open")));
    assertFalse("nothing forwarded before a co-process is healthy", hub.wants("open"));
    hub.setHealthy(true);
    assertTrue(hub.wants("open"));
    assertFalse(hub.wants("getfileinfo"));
    assertFalse(hub.wants(null));
    hub.offer(rec(1));
    hub.setHealthy(false);
    assertFalse(hub.wants("open"));
    assertEquals("an unhealthy co-process's queue is freed", 0, hub.size());
    hub.setHealthy(true);
    hub.subscribe(java.util.Collections.emptyList());
    assertFalse(hub.wants("open"));
  }

  private static void writeConcurrently(EventHub hub, int threads, int each) throws Exception {
    Thread[] writers = new Thread[threads];
    for (int w = 0; w < threads; w++) {
      writers[w] = new Thread(() -> {
        for (int i = 0; i < each; i++) {
          hub.offer(rec(i));
        }
      });
      writers[w].start();
    }
    for (Thread t : writers) {
      t.join();
    }
  }

  @Test
  public void concurrentOffersNeverExceedTheBound() throws Exception {
    EventHub hub = new EventHub();
    hub.configure(1000);
    writeConcurrently(hub, 4, 20_000);
    assertEquals(1000, hub.accepted());
    assertEquals(79_000, hub.dropped());
    List<AuditRecord> out = new ArrayList<>();
    assertEquals(1000, hub.drainTo(out, Integer.MAX_VALUE));
    assertEquals(0, hub.size());
  }

  @Test
  public void concurrentOffersAndDrainsAccountForEveryRecord() throws Exception {
    EventHub hub = new EventHub();
    hub.configure(1000);
    long[] drained = {0};
    Thread drainer = new Thread(() -> {
      List<AuditRecord> out = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        out.clear();
        drained[0] += hub.drainTo(out, 500);
      }
    });
    drainer.start();
    writeConcurrently(hub, 4, 20_000);
    drainer.join();
    List<AuditRecord> out = new ArrayList<>();
    drained[0] += hub.drainTo(out, Integer.MAX_VALUE);
    assertEquals(80_000, hub.accepted() + hub.dropped());
    assertEquals(hub.accepted(), drained[0]);
    assertEquals(0, hub.size());
  }
}
