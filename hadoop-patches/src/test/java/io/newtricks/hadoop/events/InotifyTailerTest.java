package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;

import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;
import org.apache.hadoop.hdfs.inotify.EventBatchList;
import org.apache.hadoop.ipc.StandbyException;
import org.junit.Test;

public class InotifyTailerTest {
  /** An edit log holding one CLOSE event per txid from 1 to last. */
  static final class FakeLog implements InotifyTailer.Source {
    long last;
    long firstAvailable = 1;
    boolean standby;
    int calls;
    long readMs; // how long one editsFrom takes, like a scan of a long in-progress segment

    @Override
    public long currentTxid() throws IOException {
      if (standby) {
        throw new StandbyException("standby");
      }
      return last;
    }

    @Override
    public EventBatchList editsFrom(long txid) throws IOException {
      calls++;
      if (readMs > 0) {
        try {
          Thread.sleep(readMs);
        } catch (InterruptedException e) {
          throw new IOException(e);
        }
      }
      if (standby) {
        throw new StandbyException("standby");
      }
      long from = Math.max(txid, firstAvailable);
      if (from > last) {
        return new EventBatchList(Collections.emptyList(), -1, -1, last);
      }
      long to = Math.min(last, from + 999);
      List<EventBatch> batches = new ArrayList<>();
      for (long t = from; t <= to; t++) {
        batches.add(new EventBatch(t, new Event[] {new Event.CloseEvent("/f" + t, t * 10, t)}));
      }
      return new EventBatchList(batches, from, to, last);
    }
  }

  private static HookMetrics metrics() {
    return new HookMetrics("test");
  }

  @Test
  public void expensiveReadsAreSpacedByTheirCost() {
    FakeLog log = new FakeLog();
    log.last = 1;
    InotifyTailer t = new InotifyTailer(log, 10, 100_000, 20, metrics());
    t.setFilter(java.util.Collections.singletonList(NamespaceEvent.Type.CLOSE),
        java.util.Collections.emptyList());
    t.maybePoll(0); // positions the cursor, no read
    log.last = 50;
    log.readMs = 20;
    t.maybePoll(100);
    assertEquals(1, log.calls);
    // A read took >= 20 ms, so with factor 20 the next one waits >= 400 ms, not 10 ms.
    t.maybePoll(120);
    t.maybePoll(400);
    assertEquals(1, log.calls);
    t.maybePoll(1_000_000); // long after any plausible read time x 20
    assertEquals(2, log.calls);
  }

  @Test
  public void startsAtCurrentTxidAndReadsNewEvents() {
    FakeLog log = new FakeLog();
    log.last = 5;
    InotifyTailer t = new InotifyTailer(log, 0, 100, metrics());
    t.maybePoll(0);
    assertEquals(5, t.lastReadTxid());
    log.last = 8;
    t.maybePoll(1);
    List<NamespaceEvent> out = new ArrayList<>();
    t.drainTo(out, 10);
    assertEquals(3, out.size());
    assertEquals(6, out.get(0).getTxid());
    assertEquals(NamespaceEvent.Type.CLOSE, out.get(0).getType());
    assertEquals("/f6", out.get(0).getPath());
    assertEquals(60, out.get(0).getSize());
    assertEquals(3, t.outstanding());
    t.acknowledge(8, 8);
    assertEquals(0, t.outstanding());
    assertEquals(8, t.ackedTxid());
  }

  @Test
  public void stopsReadingWhenTooMuchIsUnacknowledged() {
    FakeLog log = new FakeLog();
    InotifyTailer t = new InotifyTailer(log, 0, 10, metrics());
    t.maybePoll(0); // positions at 0
    log.last = 100;
    t.maybePoll(1);
    int calls = log.calls;
    t.maybePoll(2); // 100 outstanding > 10: must not read further
    assertEquals(calls, log.calls);
    List<NamespaceEvent> out = new ArrayList<>();
    t.drainTo(out, 1000);
    t.acknowledge(100, 100);
    log.last = 101;
    t.maybePoll(3);
    assertEquals(101, t.lastReadTxid());
  }

  @Test
  public void skipsGapsAndWaitsOnStandby() {
    FakeLog log = new FakeLog();
    log.standby = true;
    InotifyTailer t = new InotifyTailer(log, 0, 100, metrics());
    t.maybePoll(0);
    assertEquals(-1, t.lastReadTxid());
    log.standby = false;
    log.last = 3;
    t.maybePoll(10_000);
    assertEquals(3, t.lastReadTxid());
    log.last = 20;
    log.firstAvailable = 10; // 4..9 purged
    t.maybePoll(20_000);
    assertEquals(20, t.lastReadTxid());
    List<NamespaceEvent> out = new ArrayList<>();
    t.drainTo(out, 100);
    assertEquals(11, out.size());
    assertEquals(10, out.get(0).getTxid());
  }
}
