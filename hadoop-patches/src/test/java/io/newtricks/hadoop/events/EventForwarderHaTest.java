package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import io.newtricks.proto.v1.NameNodeState;
import io.newtricks.proto.v1.NamespaceEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.inotify.Event;
import org.junit.Test;

/**
 * On an HA NameNode the forwarder says its state in every batch, tells a change at once, sends
 * no namespace event while standby, and starts each active term's stream only after the
 * co-process said where (resume_term, resume_after_txid): exactly the events after that txid.
 */
public class EventForwarderHaTest {
  /** An edit log of CLOSE events at the txids in {@code log}. */
  static final class FakeTailer extends NamespaceTailer {
    final List<Long> log = new CopyOnWriteArrayList<>();

    FakeTailer(HookMetrics m) {
      super(1000, m);
    }

    @Override
    void maybePoll(long nowMs) {
      long last = log.isEmpty() ? 0 : log.get(log.size() - 1);
      if (cursor < 0) {
        cursor = last; // from the present
        return;
      }
      for (long t : log) {
        if (t > cursor) {
          offer(t, new Event.CloseEvent("/f" + t, 1, 1));
        }
      }
      cursor = Math.max(cursor, last);
    }
  }

  @Test
  public void namespaceStreamFollowsActiveTerms() throws Exception {
    List<EventBatch> received = new CopyOnWriteArrayList<>();
    AtomicReference<NameNodeState> state = new AtomicReference<>(NameNodeState.NAMENODE_STATE_STANDBY);
    AtomicLong resumeTerm = new AtomicLong();
    AtomicLong resumeAfter = new AtomicLong(105);
    EventHub hub = new EventHub();
    hub.configure(100);
    HookMetrics m = new HookMetrics("test-fwd-ha");
    FakeTailer tailer = new FakeTailer(m);
    for (long t = 101; t <= 110; t++) {
      tailer.log.add(t);
    }
    try (SinkFixture sink = new SinkFixture("nt-fwd-ha", b -> {
      received.add(b);
      return SinkFixture.ack().setResumeTerm(resumeTerm.get()).setResumeAfterTxid(resumeAfter.get()).build();
    })) {
      FixedLink link = new FixedLink(sink.channel,
          EventFilter.newBuilder().addNamespaceTypes(NamespaceEvent.Type.CLOSE).build(), () -> { });
      Configuration conf = new Configuration(false);
      conf.set(HookConf.STATE_FILE, new java.io.File(sink.dir, "state").getPath());
      EventForwarder f = new EventForwarder(hub, tailer, link, m,
          new HookConf(conf, HookConf.NAMENODE_BINARY), true, state::get);
      f.start();
      try {
        await(received, b -> b.getNamenodeState() == NameNodeState.NAMENODE_STATE_STANDBY && b.getHa(), 3_000);
        Thread.sleep(800);
        assertEquals("namespace events while standby", 0, namespace(received).size());

        long t0 = System.nanoTime();
        state.set(NameNodeState.NAMENODE_STATE_ACTIVE);
        await(received, b -> b.getNamenodeState() == NameNodeState.NAMENODE_STATE_ACTIVE && b.getActiveTerm() == 1, 3_000);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("active told after " + ms + " ms", ms < 1_000);
        Thread.sleep(800);
        assertEquals("namespace events before the resume point", 0, namespace(received).size());

        resumeTerm.set(1);
        await(received, b -> namespace(received).size() >= 5, 5_000);
        assertEquals(List.of(106L, 107L, 108L, 109L, 110L), namespace(received));
        assertEquals("resume_txid", 106, firstResume(received));

        state.set(NameNodeState.NAMENODE_STATE_STANDBY);
        await(received, b -> b.getNamenodeState() == NameNodeState.NAMENODE_STATE_STANDBY && b.getActiveTerm() == 1, 3_000);
        tailer.log.add(111L);
        tailer.log.add(112L);
        Thread.sleep(800);
        assertEquals("namespace events while standby again", 5, namespace(received).size());

        resumeAfter.set(110);
        resumeTerm.set(2); // the co-process answers for term 2 once it sees it
        state.set(NameNodeState.NAMENODE_STATE_ACTIVE);
        await(received, b -> namespace(received).size() >= 7, 5_000);
        assertEquals(List.of(106L, 107L, 108L, 109L, 110L, 111L, 112L), namespace(received));
        for (EventBatch b : received) {
          if (b.getEventsCount() > 0) {
            assertEquals(NameNodeState.NAMENODE_STATE_ACTIVE, b.getNamenodeState());
            assertTrue("safe txid on the active stream", b.getSafeTxid() >= 105);
          }
        }
      } finally {
        f.stop();
      }
    }
  }

  private static void await(List<EventBatch> received, Predicate<EventBatch> p, long ms)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < deadline) {
      for (EventBatch b : received) {
        if (p.test(b)) {
          return;
        }
      }
      Thread.sleep(10);
    }
    throw new AssertionError("timed out; received " + received.size() + " batches");
  }

  private static List<Long> namespace(List<EventBatch> received) {
    List<Long> out = new ArrayList<>();
    for (EventBatch b : received) {
      for (io.newtricks.proto.v1.Event e : b.getEventsList()) {
        if (e.hasNamespace()) {
          out.add(e.getNamespace().getTxid());
        }
      }
    }
    return out;
  }

  private static long firstResume(List<EventBatch> received) {
    for (EventBatch b : received) {
      if (b.getResumeTxid() > 0) {
        return b.getResumeTxid();
      }
    }
    return -1;
  }
}
