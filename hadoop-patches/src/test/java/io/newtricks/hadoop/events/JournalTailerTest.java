package io.newtricks.hadoop.events;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.hdfs.inotify.Event;
import org.junit.Test;

public class JournalTailerTest {
  /** An edit log where txid t is "CLOSE /f<t>"; txids <= finalizedTo are in finalized segments. */
  static final class FakeLog implements JournalTailer.Log {
    long current;
    long finalizedTo;
    long firstAvailable = 1;
    int rolls;
    int reads;

    @Override
    public long currentTxid() {
      return current;
    }

    @Override
    public long readFinalized(long from, long to, int maxOps, JournalTailer.EventSink sink) {
      reads++;
      if (from < firstAvailable) {
        return -firstAvailable;
      }
      long last = from - 1;
      for (long t = from; t <= Math.min(to, finalizedTo) && t - from < maxOps; t++) {
        sink.accept(t, close(t));
        last = t;
      }
      return last;
    }

    @Override
    public void roll() {
      rolls++;
      finalizedTo = current;
    }
  }

  static Event close(long t) {
    return new Event.CloseEvent("/f" + t, t, t);
  }

  static EditCapture.Chunk chunk(long from, long to) {
    List<EditCapture.Captured> ev = new ArrayList<>();
    for (long t = from; t <= to; t++) {
      ev.add(new EditCapture.Captured(t, close(t)));
    }
    return new EditCapture.Chunk(from, to, ev);
  }

  private static JournalTailer tailer(EditCapture cap, FakeLog log, int maxPending) {
    JournalTailer t = new JournalTailer(cap, log, 10, 1_000, maxPending, new HookMetrics("test"));
    t.setFilter(Collections.singletonList(NamespaceEvent.Type.CLOSE), Collections.emptyList());
    return t;
  }

  private static List<Long> drain(NamespaceTailer t) {
    List<NamespaceEvent> out = new ArrayList<>();
    t.drainTo(out, 1_000_000);
    List<Long> txids = new ArrayList<>();
    for (NamespaceEvent e : out) {
      txids.add(e.getTxid());
    }
    return txids;
  }

  @Test
  public void takesLiveChunksWithoutReadingTheEditLog() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    log.current = 10;
    JournalTailer t = tailer(cap, log, 100);
    t.maybePoll(0);
    cap.publish(chunk(11, 12));
    cap.publish(chunk(13, 13));
    t.maybePoll(1);
    assertEquals(Arrays.asList(11L, 12L, 13L), drain(t));
    assertEquals(0, log.reads);
    assertEquals(0, log.rolls);
  }

  @Test
  public void fillsAHoleFromFinalizedSegmentsThenRollsForTheInProgressPart() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    log.current = 10;
    JournalTailer t = tailer(cap, log, 100);
    t.maybePoll(0);
    // 11..20 were never captured (co-process away, capture paused); 11..15 are finalized.
    log.finalizedTo = 15;
    log.current = 22;
    cap.publish(chunk(21, 22));
    t.maybePoll(1);    // sees the hole, waits one poll interval for a late chunk
    t.maybePoll(20);   // reads 11..15 from finalized segments, rolls for 16..20
    assertEquals(1, log.rolls);
    t.maybePoll(40);   // 16..20 now finalized; then the live chunk
    assertEquals(Arrays.asList(11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L, 21L, 22L),
        drain(t));
  }

  @Test
  public void overflowPausesCaptureUntilDrained() {
    EditCapture cap = new EditCapture();
    cap.install(3);
    cap.select(EditCapture.Selection.of(Collections.singletonList(NamespaceEvent.Type.CLOSE),
        Collections.emptyList()));
    cap.publish(chunk(1, 2));
    cap.publish(chunk(3, 4)); // 4 > 3: dropped, capture pauses
    assertTrue(cap.isPaused());
    assertEquals(0, cap.selection().types.length);
    cap.pop();
    assertEquals(1, cap.selection().types.length);
  }

  @Test
  public void restartResendsEverythingAfterTheDurableTxid() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    log.current = 0;
    JournalTailer t = tailer(cap, log, 100);
    t.maybePoll(0);
    cap.publish(chunk(1, 5));
    t.maybePoll(1);
    assertEquals(5, drain(t).size());
    t.acknowledge(5, 3); // accepted 5, durable up to 3
    assertEquals(3, t.safeTxid());
    t.restartAfter(3);   // new co-process
    assertEquals(Arrays.asList(4L, 5L), drain(t));
    t.acknowledge(5, 5);
    assertEquals(5, t.safeTxid());
  }

  @Test
  public void restartBeyondRetentionRereadsTheEditLog() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    JournalTailer t = tailer(cap, log, 2); // retains 2 events at most
    t.maybePoll(0);
    cap.publish(chunk(1, 2));
    t.maybePoll(1);
    drain(t);
    cap.publish(chunk(3, 4));
    t.maybePoll(2);
    drain(t); // 1 and 2 fall out of retention
    log.finalizedTo = 4;
    log.current = 4;
    t.restartAfter(0);
    t.maybePoll(100);
    t.maybePoll(200);
    assertEquals(Arrays.asList(1L, 2L, 3L, 4L), drain(t));
  }

  @Test
  public void purgedEditsAreCountedAndSkipped() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    log.firstAvailable = 50;
    log.finalizedTo = 60;
    log.current = 60;
    HookMetrics m = new HookMetrics("test");
    JournalTailer t = new JournalTailer(cap, log, 10, 1_000, 100, m);
    t.setFilter(Collections.singletonList(NamespaceEvent.Type.CLOSE), Collections.emptyList());
    t.startAfter(10);
    cap.synced(60);
    t.maybePoll(0);
    t.maybePoll(20);
    assertEquals(1, m.namespaceGaps.value());
    t.maybePoll(40);
    List<Long> got = drain(t);
    assertEquals(50L, (long) got.get(0));
    assertEquals(60L, (long) got.get(got.size() - 1));
  }

  @Test
  public void aResumePointBeyondTheEditLogStartsFromThePresent() {
    EditCapture cap = new EditCapture();
    FakeLog log = new FakeLog();
    log.current = 5; // a reformatted NameNode; the state file says 1000
    JournalTailer t = tailer(cap, log, 100);
    t.startAfter(1000);
    t.maybePoll(0);
    cap.publish(chunk(6, 7));
    t.maybePoll(1);
    assertEquals(Arrays.asList(6L, 7L), drain(t));
  }

  @Test
  public void captureResumesWhenAnOverflowRacedWithTheLastPop() {
    EditCapture cap = new EditCapture();
    cap.install(1);
    cap.select(EditCapture.Selection.of(Collections.singletonList(NamespaceEvent.Type.CLOSE),
        Collections.emptyList()));
    cap.publish(chunk(1, 1));
    cap.pop();              // the tailer empties the queue...
    cap.publish(chunk(2, 3)); // ...and a chunk too big for it pauses capture with nothing queued
    assertTrue(cap.isPaused());
    FakeLog log = new FakeLog();
    log.current = 3;
    JournalTailer t = tailer(cap, log, 100);
    t.maybePoll(0);
    assertEquals(false, cap.isPaused());
  }

  @Test
  public void stateRoundTrips() throws Exception {
    File dir = Files.createTempDirectory("evstate").toFile();
    File f = new File(dir, "sub/state.properties");
    new EventState(42, Arrays.asList(NamespaceEvent.Type.CLOSE, NamespaceEvent.Type.RENAME),
        Arrays.asList("/ckpt/", "/a,b")).save(f);
    EventState st = EventState.load(f);
    assertEquals(42, st.durableTxid);
    assertEquals(Arrays.asList(NamespaceEvent.Type.CLOSE, NamespaceEvent.Type.RENAME), st.types);
    assertEquals(Arrays.asList("/ckpt/", "/a,b"), st.prefixes);
    assertEquals(null, EventState.load(new File(dir, "none")));
  }
}
