package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.newtricks.proto.v1.AuditEvent;
import io.newtricks.proto.v1.EventFilter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import org.junit.Test;

/**
 * The audit repeat hold (EventFilter.audit_min_repeats): a (cmd, src) pair's audited records
 * reach the queue only once the pair was audited N times within the window, the held ones
 * first and in order; pairs that never repeat are never forwarded and expire; a full table
 * forwards directly; N <= 1 forwards everything.
 */
public class AuditHoldTest {
  private static final long W = 10_000;

  private static AuditRecord open(String src, String user, long t) {
    return new AuditRecord("open", src, null, user, null, true, t, null);
  }

  /** A healthy hub subscribed to "open" with a hold of n within W. */
  private static EventHub hub(int n, int holdMax) {
    EventHub hub = new EventHub();
    hub.configure(1_000_000, holdMax);
    hub.subscribe(Collections.singletonList("open"), n, W);
    hub.setHealthy(true);
    return hub;
  }

  private static List<AuditRecord> drain(EventHub hub) {
    List<AuditRecord> out = new ArrayList<>();
    hub.drainTo(out, Integer.MAX_VALUE);
    return out;
  }

  @Test
  public void forwardedOnTheNthRecordWithinTheWindowHeldOnesFirstInOrder() {
    EventHub hub = hub(3, 100);
    assertTrue(hub.admit(open("/a", "u1", 1_000)));
    assertTrue(hub.admit(open("/b", "u1", 1_500)));
    assertTrue(hub.admit(open("/a", "u2", 2_000)));
    assertEquals("two opens of /a and one of /b are held", 0, hub.size());
    assertEquals(3, hub.holdHeld.sum());
    assertEquals(2, hub.holdEntries());
    assertTrue(hub.admit(open("/a", "u3", 1_000 + W))); // the third within W of the first
    List<AuditRecord> out = drain(hub);
    assertEquals(3, out.size());
    assertEquals(Arrays.asList("u1", "u2", "u3"),
        Arrays.asList(out.get(0).user, out.get(1).user, out.get(2).user));
    assertEquals("held records keep their own times", 1_000, out.get(0).timeMs);
    assertEquals(2_000, out.get(1).timeMs);
    assertEquals(2, hub.holdReleased.sum());
    // Further opens go straight through while each is within W of the previous one ...
    assertTrue(hub.admit(open("/a", "u4", 1_000 + 2 * W)));
    assertEquals(1, drain(hub).size());
    // ... and a longer gap puts the pair under hold again.
    assertTrue(hub.admit(open("/a", "u5", 1_001 + 3 * W)));
    assertEquals(0, hub.size());
    // /b was opened once: never forwarded.
    assertTrue(hub.admit(open("/b", "u2", 1_501 + W)));
    assertEquals("/b's two opens are further apart than the window", 0, hub.size());
    assertEquals("the first open of /b expired when the second came", 1, hub.holdExpired.sum());
  }

  @Test
  public void aPairThatNeverRepeatsWithinTheWindowIsNeverForwardedAndExpires() {
    EventHub hub = hub(2, 100);
    long t = 5_000;
    for (int i = 0; i < 5; i++) {
      assertTrue(hub.admit(open("/slow", "u" + i, t)));
      assertTrue(hub.admit(open("/once" + i, "u", t)));
      t += W + 1;
    }
    assertEquals("nothing repeated within the window", 0, hub.size());
    assertEquals(6, hub.holdEntries());
    assertEquals("each open of /slow expired the one before", 4, hub.holdExpired.sum());
    long last = t - W - 1;
    // The window (plus the admission grace) has passed for /once0../once3, not for the pairs
    // opened last (/slow, /once4): they could still reach N and are kept.
    hub.sweepHold(last + W);
    assertEquals(2, hub.holdEntries());
    assertEquals(4 + 4, hub.holdExpired.sum());
    hub.sweepHold(last + W + W / 4);
    assertEquals("every entry is dropped by the sweep", 0, hub.holdEntries());
    assertEquals(4 + 6, hub.holdExpired.sum());
    assertEquals(Long.MAX_VALUE, hub.holdSweepDue());
    assertEquals(0, hub.size());
    assertEquals(0, hub.holdReleased.sum());
  }

  @Test
  public void theSweepKeepsAnEntryThatCanStillReachN() {
    EventHub hub = hub(2, 100);
    hub.admit(open("/x", "u1", 1_000));
    assertEquals("held", 0, hub.size());
    hub.sweepHold(1_000 + W / 2);
    assertEquals(1, hub.holdEntries());
    hub.admit(open("/x", "u2", 1_000 + W));
    assertEquals("the second open within W released the first", 2, hub.size());
  }

  @Test
  public void aFullTableForwardsDirectlyAndCounts() {
    EventHub hub = hub(3, 2);
    hub.admit(open("/a", "u", 1));
    hub.admit(open("/b", "u", 1));
    assertEquals(0, hub.size());
    hub.admit(open("/c", "u", 1));
    hub.admit(open("/d", "u", 1));
    assertEquals("pairs beyond the table's bound are forwarded", 2, hub.size());
    assertEquals(2, hub.holdOverflow.sum());
    assertEquals(2, hub.holdEntries());
    // A tracked pair is still held.
    hub.admit(open("/a", "u", 2));
    assertEquals(2, hub.size());
  }

  @Test
  public void aHoldOfOneOrNoWindowForwardsEverything() {
    // The same opens under a hold of 2 are held; under 0, 1 or no window all are forwarded.
    for (int[] nw : new int[][] {{2, 10_000}, {0, 10_000}, {1, 10_000}, {3, 0}}) {
      EventHub hub = new EventHub();
      hub.configure(100, 100);
      hub.subscribe(Collections.singletonList("open"), nw[0], nw[1]);
      hub.setHealthy(true);
      for (int i = 0; i < 5; i++) {
        hub.admit(open("/f" + i, "u", i));
      }
      boolean held = nw[0] >= 2 && nw[1] > 0;
      assertEquals("min_repeats " + nw[0] + " window " + nw[1], held ? 0 : 5, hub.size());
      assertEquals(held ? 5 : 0, hub.holdHeld.sum());
    }
  }

  @Test
  public void anUnhealthyCoprocessOrANewFilterDiscardsWhatIsHeld() {
    EventHub hub = hub(3, 100);
    hub.admit(open("/a", "u1", 1));
    hub.admit(open("/a", "u2", 2));
    hub.setHealthy(false);
    assertEquals(0, hub.holdEntries());
    hub.setHealthy(true);
    hub.admit(open("/a", "u3", 3));
    assertEquals("the records held before the co-process went away are gone", 0, hub.size());
    // The same filter again (each acknowledgement that carries it) keeps the table.
    hub.subscribe(Collections.singletonList("open"), 3, W);
    assertEquals(1, hub.holdEntries());
    hub.subscribe(Collections.singletonList("open"), 0, 0);
    hub.admit(open("/a", "u4", 4));
    assertEquals(1, hub.size());
  }

  @Test
  public void concurrentAdmissionsLoseNothingThatReachedN() throws Exception {
    int threads = 8;
    int shared = 200;   // paths every thread opens, 3 times each
    int each = 3;
    EventHub hub = hub(5, 1_000_000);
    CyclicBarrier start = new CyclicBarrier(threads);
    Thread[] ts = new Thread[threads];
    for (int w = 0; w < threads; w++) {
      final int id = w;
      ts[w] = new Thread(() -> {
        try {
          start.await();
          for (int r = 0; r < each; r++) {
            for (int p = 0; p < shared; p++) {
              hub.admit(open("/shared/" + p, "t" + id, 1_000 + r));
              hub.admit(open("/own/" + id + "/" + p + "/" + r, "t" + id, 1_000 + r));
            }
          }
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      ts[w].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    Map<String, Integer> perPath = new HashMap<>();
    for (AuditRecord r : drain(hub)) {
      perPath.merge(r.src, 1, Integer::sum);
    }
    assertEquals("every shared path reached N: all its opens are forwarded", shared,
        perPath.size());
    for (int p = 0; p < shared; p++) {
      assertEquals("/shared/" + p, Integer.valueOf(threads * each), perPath.get("/shared/" + p));
    }
    assertEquals(shared * 4, hub.holdReleased.sum()); // N-1 held then released per path
    assertEquals(shared * 4 + threads * shared * each, hub.holdHeld.sum());
    assertEquals(shared + threads * shared * each, hub.holdEntries());
    assertEquals(0, hub.dropped());
  }

  /** The filter the co-process sends in an acknowledgement reaches the hold. */
  @Test
  public void theForwarderAppliesTheFiltersHold() throws Exception {
    List<AuditEvent> received = new CopyOnWriteArrayList<>();
    EventHub hub = new EventHub();
    hub.configure(100);
    try (SinkFixture sink = new SinkFixture("nt-hold", b -> {
      for (io.newtricks.proto.v1.Event e : b.getEventsList()) {
        if (e.hasAudit()) {
          received.add(e.getAudit());
        }
      }
      return SinkFixture.ack().build();
    })) {
      sink.startForwarder(hub, new FixedLink(sink.channel, EventFilter.newBuilder()
          .addAuditCommands("open").setAuditMinRepeats(3).setAuditRepeatWindowMs(60_000).build(),
          () -> { }), "test-hold");
      long deadline = System.currentTimeMillis() + 5_000;
      while (!hub.wants("open") && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertTrue("subscribed at Configure", hub.wants("open"));
      long now = System.currentTimeMillis();
      hub.admit(open("/hot", "u1", now));
      hub.admit(open("/cold", "u1", now));
      hub.admit(open("/hot", "u2", now + 1));
      Thread.sleep(500);
      assertEquals("held: nothing delivered", 0, received.size());
      hub.admit(open("/hot", "u3", now + 2));
      deadline = System.currentTimeMillis() + 5_000;
      while (received.size() < 3 && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      Thread.sleep(200);
      assertEquals(3, received.size());
      for (int i = 0; i < 3; i++) {
        assertEquals("/hot", received.get(i).getSrc());
        assertEquals("u" + (i + 1), received.get(i).getUser());
      }
    }
  }
}
