package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.newtricks.proto.v1.FileInspection;
import io.newtricks.proto.v1.InspectFilesRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * InspectFiles holds the namesystem's read lock in slices (issue 25 item 5): the largest request
 * (4096 files, every block of each) no longer holds it for the whole scan, only for
 * newtricks.host.lock.max-hold.ms plus one block at a time, and the answers are those of one
 * long hold.
 */
public class InspectSlicesTest {
  /** A clock the fake's work advances: each block scanned costs STEP_NANOS. */
  private static final long STEP_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

  private static final class Clock {
    long now;
  }

  /** Files by id: the live replica count of each block. */
  private static final class FakeInodes implements NameNodeHostService.Inodes<int[]> {
    final Map<Long, int[]> files = new HashMap<>();
    final Clock clock;
    int scanned;
    long lastId = -1;

    FakeInodes(Clock clock) {
      this.clock = clock;
    }

    @Override
    public int[] file(long id) {
      lastId = id;
      return files.get(id);
    }

    @Override
    public int blocks(int[] f) {
      return f.length;
    }

    @Override
    public int liveReplicas(int[] f, int block) {
      clock.now += STEP_NANOS;
      scanned++;
      return f[block];
    }

    @Override
    public void holders(int[] f, int block, Set<String> into) {
      into.add("dn" + (block % 3));
    }

    @Override
    public void describe(int[] f, FileInspection.Builder b) {
      b.setPath("/f" + f.length).setReplication(3).setBlocks(f.length);
    }
  }

  /** A lock that counts, checks balance, and runs an action at each release. */
  private static final class CountingLock implements LockSlices.Lock {
    int locks;
    int unlocks;
    boolean held;
    Runnable onRelease = () -> {};

    @Override
    public void lock() {
      assertFalse("taken twice", held);
      held = true;
      locks++;
    }

    @Override
    public void unlock() {
      assertTrue("released unheld", held);
      held = false;
      unlocks++;
      onRelease.run();
    }
  }

  private static InspectFilesRequest maxRequest(int files, int blocksEach, FakeInodes inodes) {
    InspectFilesRequest.Builder req = InspectFilesRequest.newBuilder().setService(true).setHolders(true);
    for (int i = 0; i < files; i++) {
      int[] live = new int[blocksEach];
      Arrays.fill(live, 3);
      live[(i * 7) % blocksEach] = 1 + i % 2; // one short block per file
      inodes.files.put((long) i, live);
      req.addFileIds(i).addWant(3).addFromBlock(0);
    }
    return req.build();
  }

  private static List<FileInspection> run(InspectFilesRequest req, FakeInodes inodes,
      CountingLock lock, Clock clock, long maxHoldNanos, LockSlices[] slicesOut) {
    LockSlices slices = new LockSlices(lock, maxHoldNanos, () -> clock.now);
    List<FileInspection.Builder> got;
    try (LockSlices s = slices.open()) {
      got = NameNodeHostService.inspect(req, inodes, s);
    }
    slicesOut[0] = slices;
    List<FileInspection> out = new ArrayList<>();
    for (FileInspection.Builder b : got) {
      out.add(b.build());
    }
    return out;
  }

  @Test
  public void theLargestRequestHoldsTheLockInShortSlicesWithTheSameAnswers() {
    // 4096 files (the request's bound) of 40 blocks: 163840 blocks at 100 us each, 16 s of
    // scanning. In one hold (as before) the lock is held all that time.
    Clock clock = new Clock();
    FakeInodes inodes = new FakeInodes(clock);
    InspectFilesRequest req = maxRequest(NameNodeHostService.MAX_BATCH, 40, inodes);
    CountingLock oneLock = new CountingLock();
    LockSlices[] one = new LockSlices[1];
    List<FileInspection> whole = run(req, inodes, oneLock, clock, Long.MAX_VALUE, one);
    assertEquals(1, one[0].holds());
    assertEquals(TimeUnit.SECONDS.toNanos(16) + TimeUnit.MILLISECONDS.toNanos(384), one[0].longestNanos());

    CountingLock lock = new CountingLock();
    LockSlices[] sliced = new LockSlices[1];
    List<FileInspection> got = run(req, inodes, lock, clock, TimeUnit.MILLISECONDS.toNanos(5), sliced);
    assertEquals(whole, got);
    assertEquals(lock.locks, lock.unlocks);
    assertFalse(lock.held);
    // 5 ms slices of 100 us steps: 50 blocks each; the longest is the bound (the yield comes
    // once the slice is used up, never in the middle of a block).
    assertTrue("longest hold " + sliced[0].longestNanos(),
        sliced[0].longestNanos() <= TimeUnit.MILLISECONDS.toNanos(5) + STEP_NANOS);
    assertTrue("holds " + sliced[0].holds(), sliced[0].holds() >= 163840 / 51);
    // Readiness as computed: the short block of each file.
    FileInspection f5 = got.get(5);
    assertTrue(f5.getExists());
    assertEquals(1, f5.getShortBlocks());
    assertEquals(35, f5.getFirstShortBlock());
    assertEquals(2, f5.getMinLiveReplicas());
    assertEquals(List.of("dn0", "dn1", "dn2"), f5.getHoldersList());
  }

  @Test
  public void aFileDeletedOrGrownWhileTheLockIsFreeIsReadAgain() {
    Clock clock = new Clock();
    FakeInodes inodes = new FakeInodes(clock);
    int[] big = new int[100];
    Arrays.fill(big, 3);
    inodes.files.put(1L, big);
    inodes.files.put(2L, big.clone());
    int[] grows = new int[10];
    Arrays.fill(grows, 2);
    inodes.files.put(3L, grows);
    InspectFilesRequest req = InspectFilesRequest.newBuilder().setService(true)
        .addFileIds(1).addFileIds(2).addFileIds(3).addFileIds(4)
        .addWant(3).addWant(3).addWant(3).addWant(3)
        .addFromBlock(0).addFromBlock(0).addFromBlock(0).addFromBlock(0).build();
    CountingLock lock = new CountingLock();
    // A writer that gets in at a release while file 2 is being scanned deletes it; later, one
    // appends 5 blocks to file 3 (a new inode array, as an append makes).
    lock.onRelease = () -> {
      if (inodes.lastId == 2) {
        inodes.files.remove(2L);
      }
      if (inodes.lastId == 3 && inodes.files.get(3L) == grows) {
        int[] longer = Arrays.copyOf(grows, 15);
        Arrays.fill(longer, 10, 15, 1);
        inodes.files.put(3L, longer);
      }
    };
    LockSlices[] s = new LockSlices[1];
    // 300 us slices: a release every 3 blocks.
    List<FileInspection> got = run(req, inodes, lock, clock, 3 * STEP_NANOS, s);
    assertTrue(got.get(0).getExists());
    assertEquals(100, got.get(0).getBlocks());
    assertEquals(0, got.get(0).getShortBlocks());
    assertFalse("deleted while the lock was free", got.get(1).getExists());
    assertEquals(2, got.get(1).getFileId());
    FileInspection f3 = got.get(2);
    assertTrue(f3.getExists());
    assertEquals("described as it is at its last block", 15, f3.getBlocks());
    assertEquals(15, f3.getShortBlocks()); // 10 at 2, 5 appended at 1
    assertEquals(1, f3.getMinLiveReplicas());
    assertEquals(0, f3.getFirstShortBlock());
    assertFalse("never existed", got.get(3).getExists());
    assertEquals(lock.locks, lock.unlocks);
  }

  @Test
  public void fromBlockAndEmptyFilesAnswerAsBefore() {
    Clock clock = new Clock();
    FakeInodes inodes = new FakeInodes(clock);
    inodes.files.put(1L, new int[] {3, 3, 1, 3});
    inodes.files.put(2L, new int[0]);
    InspectFilesRequest req = InspectFilesRequest.newBuilder().setService(true)
        .addFileIds(1).addFileIds(2).addFileIds(1)
        .addWant(3).addWant(3).addWant(3)
        .addFromBlock(3).addFromBlock(0).addFromBlock(9).build();
    LockSlices[] s = new LockSlices[1];
    List<FileInspection> got = run(req, inodes, new CountingLock(), clock, 0, s);
    assertEquals(0, got.get(0).getShortBlocks());
    assertEquals(4, got.get(0).getFirstShortBlock());
    assertEquals(3, got.get(0).getMinLiveReplicas());
    assertEquals(-1, got.get(1).getMinLiveReplicas());
    assertEquals(0, got.get(1).getFirstShortBlock());
    assertEquals("from beyond the end: nothing scanned", -1, got.get(2).getMinLiveReplicas());
    assertEquals(4, got.get(2).getFirstShortBlock());
  }
}
