package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.grpc.Status;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.proto.v1.GetXAttrsRequest;
import io.newtricks.proto.v1.GetXAttrsResponse;
import io.newtricks.proto.v1.ReconfigureRequest;
import io.newtricks.proto.v1.ReconfigureResponse;
import io.newtricks.proto.v1.ReplicationChange;
import io.newtricks.proto.v1.ReplicationResult;
import io.newtricks.proto.v1.SetBalancedReadsRequest;
import io.newtricks.proto.v1.SetBalancedReadsResponse;
import io.newtricks.proto.v1.SetReplicationsRequest;
import io.newtricks.proto.v1.SetReplicationsResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/**
 * Every host call bounds what a co-process asks (issue 25): SetBalancedReads (service only, a
 * bounded path list), SetReplications (a bounded pool, a bounded wait), Reconfigure (values
 * checked), GetXAttrs (a bounded name list).
 */
public class HostBoundsTest {
  private static Status.Code code(Throwable t) {
    return StatusMapping.toStatus(t).getStatus().getCode();
  }

  // ---- SetBalancedReads ----

  @Test
  public void setBalancedReadsNeedsTheServiceFlagAndABoundedList() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setInt(HookConf.BALANCED_READS_MAX_PATHS, 3);
    List<List<String>> set = new CopyOnWriteArrayList<>();
    HostBoundsFixture fx = new HostBoundsFixture(conf, paths -> {
      set.add(new ArrayList<>(paths));
      return SetBalancedReadsResponse.newBuilder().setScope("hinted").build();
    });
    assertEquals(Status.Code.INVALID_ARGUMENT, balanced(fx, SetBalancedReadsRequest.newBuilder()
        .addPaths("/a").build()).code());
    HostBoundsFixture.Answered<SetBalancedReadsResponse> tooMany = balanced(fx,
        SetBalancedReadsRequest.newBuilder().setService(true)
            .addPaths("/a").addPaths("/b").addPaths("/c").addPaths("/d").build());
    assertEquals(Status.Code.INVALID_ARGUMENT, tooMany.code());
    assertTrue(tooMany.message(), tooMany.message().contains(HookConf.BALANCED_READS_MAX_PATHS));
    assertEquals(Status.Code.INVALID_ARGUMENT, balanced(fx, SetBalancedReadsRequest.newBuilder()
        .setService(true).addPaths("relative/x").build()).code());
    assertEquals(Status.Code.INVALID_ARGUMENT, balanced(fx, SetBalancedReadsRequest.newBuilder()
        .setService(true).addPaths("/" + "x".repeat(8000)).build()).code());
    assertTrue("nothing replaced by a refused call", set.isEmpty());
    assertEquals("hinted", balanced(fx, SetBalancedReadsRequest.newBuilder().setService(true)
        .addPaths("/a").addPaths("/b").addPaths("/c").build()).get().getScope());
    assertEquals(Collections.singletonList(List.of("/a", "/b", "/c")), set);
    assertEquals(160_000, new HookConf(new Configuration(false), HookConf.NAMENODE_BINARY)
        .balancedReadsMaxPaths);
  }

  private static HostBoundsFixture.Answered<SetBalancedReadsResponse> balanced(
      HostBoundsFixture fx, SetBalancedReadsRequest req) {
    HostBoundsFixture.Answered<SetBalancedReadsResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.setBalancedReads(req, a);
    return a;
  }

  // ---- SetReplications ----

  private static SetReplicationsRequest batch(String... paths) {
    SetReplicationsRequest.Builder b = SetReplicationsRequest.newBuilder().setUser("alice");
    for (String p : paths) {
      b.addChanges(ReplicationChange.newBuilder().setPath(p).setReplication(5));
    }
    return b.build();
  }

  private static String[] paths(String prefix, int n) {
    String[] out = new String[n];
    for (int i = 0; i < n; i++) {
      out[i] = prefix + i;
    }
    return out;
  }

  /**
   * A change that hangs in the NameNode does not hang the call: after the timeout the changes
   * still running answer DEADLINE_EXCEEDED, those not started RESOURCE_EXHAUSTED (and never
   * run); while the hung ones hold their slots, a batch that does not fit is refused whole.
   */
  @Test
  public void setReplicationsWaitsBoundedOnABoundedPool() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setInt(HookConf.SET_REPLICATIONS_THREADS, 2);
    conf.setInt(HookConf.SET_REPLICATIONS_QUEUE, 8);
    conf.setLong(HookConf.SET_REPLICATIONS_TIMEOUT_MS, 300);
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    CountDownLatch release = new CountDownLatch(1);
    List<String> applied = new CopyOnWriteArrayList<>();
    fx.service.applier = (c, user, service) -> {
      applied.add(c.getPath());
      if (c.getPath().startsWith("/slow")) {
        try {
          release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return ReplicationResult.newBuilder().setCode(0).setChanged(true).build();
    };
    try {
      long start = System.nanoTime();
      HostBoundsFixture.Answered<SetReplicationsResponse> a = new HostBoundsFixture.Answered<>();
      fx.service.setReplications(batch("/a", "/slow1", "/slow2", "/b"), a);
      List<ReplicationResult> r = a.get().getResultsList();
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue("answered after " + tookMs + " ms, timeout 300", tookMs < 5_000);
      assertEquals(4, r.size());
      assertEquals(0, r.get(0).getCode());
      assertEquals(Status.Code.DEADLINE_EXCEEDED.value(), r.get(1).getCode());
      assertEquals(Status.Code.DEADLINE_EXCEEDED.value(), r.get(2).getCode());
      assertTrue(r.get(1).getMessage(), r.get(1).getMessage().contains("outcome is unknown"));
      assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), r.get(3).getCode());
      assertTrue(r.get(3).getMessage(), r.get(3).getMessage().contains("not applied"));

      // The two hung changes hold 2 of 8 slots: 7 more do not fit, refused whole.
      HostBoundsFixture.Answered<SetReplicationsResponse> full = new HostBoundsFixture.Answered<>();
      fx.service.setReplications(batch(paths("/c", 7)), full);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.code());
      assertTrue(full.message(), full.message().contains(HookConf.SET_REPLICATIONS_QUEUE));
      // More than the pool ever admits.
      HostBoundsFixture.Answered<SetReplicationsResponse> never = new HostBoundsFixture.Answered<>();
      fx.service.setReplications(batch(paths("/e", 9)), never);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, never.code());

      release.countDown();
      // The hung changes end, their slots come back, and a batch of 7 runs.
      long deadline = System.currentTimeMillis() + 10_000;
      HostBoundsFixture.Answered<SetReplicationsResponse> again;
      do {
        Thread.sleep(20);
        again = new HostBoundsFixture.Answered<>();
        fx.service.setReplications(batch(paths("/d", 7)), again);
      } while (again.code() == Status.Code.RESOURCE_EXHAUSTED && System.currentTimeMillis() < deadline);
      for (ReplicationResult x : again.get().getResultsList()) {
        assertEquals(0, x.getCode());
      }
      assertFalse("a withdrawn change never runs", applied.contains("/b"));
      for (String p : applied) {
        assertFalse("a refused batch never runs: " + p, p.startsWith("/c") || p.startsWith("/e"));
      }
    } finally {
      release.countDown();
    }
  }

  /** A batch naming a path twice runs in order on the call's thread, and also stops waiting. */
  @Test
  public void inOrderBatchesStopAtTheTimeout() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setLong(HookConf.SET_REPLICATIONS_TIMEOUT_MS, 200);
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    List<String> applied = new CopyOnWriteArrayList<>();
    fx.service.applier = (c, user, service) -> {
      applied.add(c.getPath());
      try {
        Thread.sleep(300);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return ReplicationResult.newBuilder().setCode(0).build();
    };
    HostBoundsFixture.Answered<SetReplicationsResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.setReplications(batch("/x", "/y", "/x"), a);
    List<ReplicationResult> r = a.get().getResultsList();
    assertEquals(0, r.get(0).getCode());
    assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), r.get(1).getCode());
    assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), r.get(2).getCode());
    assertEquals(List.of("/x"), applied);
  }

  /** Many callers at once never exceed the pool's admission, and every call answers. */
  @Test
  public void concurrentBatchesAreAdmittedOrRefusedNeverQueuedWithoutBound() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setInt(HookConf.SET_REPLICATIONS_THREADS, 2);
    conf.setInt(HookConf.SET_REPLICATIONS_QUEUE, 16);
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
    fx.service.applier = (c, user, service) -> {
      most.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      running.decrementAndGet();
      return ReplicationResult.newBuilder().setCode(0).build();
    };
    ExecutorService callers = Executors.newFixedThreadPool(8);
    try {
      List<Future<Status.Code>> calls = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        String prefix = "/p" + i + "-";
        calls.add(callers.submit(() -> {
          HostBoundsFixture.Answered<SetReplicationsResponse> a = new HostBoundsFixture.Answered<>();
          fx.service.setReplications(batch(paths(prefix, 8)), a);
          return a.code();
        }));
      }
      int ok = 0;
      for (Future<Status.Code> f : calls) {
        Status.Code c = f.get(60, TimeUnit.SECONDS);
        if (c == Status.Code.OK) {
          ok++;
        } else {
          assertEquals(Status.Code.RESOURCE_EXHAUSTED, c);
        }
      }
      assertTrue("some batches ran", ok > 0);
      assertTrue("at most the pool's threads ran at once: " + most.get(), most.get() <= 2);
    } finally {
      callers.shutdownNow();
    }
  }

  // ---- Reconfigure ----

  private static HostBoundsFixture.Answered<ReconfigureResponse> reconfigure(HostBoundsFixture fx,
      String key, String value) {
    HostBoundsFixture.Answered<ReconfigureResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.reconfigure(ReconfigureRequest.newBuilder().setKey(key).setValue(value)
        .setService(true).build(), a);
    return a;
  }

  @Test
  public void reconfigureChecksTheValue() throws Exception {
    String streams = "dfs.namenode.replication.max-streams";
    String hard = "dfs.namenode.replication.max-streams-hard-limit";
    String mult = "dfs.namenode.replication.work.multiplier.per.iteration";
    Configuration conf = new Configuration(false);
    conf.set(hard, "1000"); // the admin's own value, above the ceiling
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    assertEquals(Integer.valueOf(256), fx.hc.reconfigureMax.get(streams));
    assertEquals(Integer.valueOf(256), fx.hc.reconfigureMax.get(hard));
    assertEquals(Integer.valueOf(64), fx.hc.reconfigureMax.get(mult));
    for (String bad : new String[] {"0", "-1", "257", "abc", " 32", "32 ", "0x20", "1e2", "+5",
        "99999999999", "3.5", "x".repeat(1 << 20)}) {
      HostBoundsFixture.Answered<ReconfigureResponse> a = reconfigure(fx, streams, bad);
      assertEquals("value " + (bad.length() > 20 ? "(long)" : bad), Status.Code.INVALID_ARGUMENT,
          a.code());
      assertTrue(a.message(), a.message().contains(HookConf.RECONFIGURE_MAX_PREFIX + streams));
    }
    assertEquals(Status.Code.INVALID_ARGUMENT, reconfigure(fx, mult, "65").code());
    assertTrue("nothing reconfigured", fx.reconfigured.isEmpty());

    fx.nnConf.put(streams, "2");
    assertEquals("2", reconfigure(fx, streams, "32").get().getOldValue());
    assertEquals("32", reconfigure(fx, streams, "256").get().getOldValue());
    assertEquals("256", reconfigure(fx, streams, "").get().getOldValue()); // the default
    assertEquals("", reconfigure(fx, mult, "1").get().getOldValue());
    assertEquals(Status.Code.OK, reconfigure(fx, hard, "64").code());
    assertEquals("putting back the configured value is always allowed", Status.Code.OK,
        reconfigure(fx, hard, "1000").code());
    assertEquals(Status.Code.INVALID_ARGUMENT, reconfigure(fx, hard, "999").code());
    assertEquals(List.of(streams + "=32", streams + "=256", streams + "=null", mult + "=1",
        hard + "=64", hard + "=1000"), fx.reconfigured);
  }

  @Test
  public void anAllowedKeyWithoutACeilingIsRefused() throws Exception {
    String key = "dfs.heartbeat.interval";
    Configuration conf = new Configuration(false);
    conf.set(HookConf.RECONFIGURE_ALLOWED, key);
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    HostBoundsFixture.Answered<ReconfigureResponse> a = reconfigure(fx, key, "3");
    assertEquals(Status.Code.INVALID_ARGUMENT, a.code());
    assertTrue(a.message(), a.message().contains(HookConf.RECONFIGURE_MAX_PREFIX + key));
    conf.setInt(HookConf.RECONFIGURE_MAX_PREFIX + key, 10);
    fx = new HostBoundsFixture(conf);
    assertEquals(Status.Code.OK, reconfigure(fx, key, "10").code());
    assertEquals(Status.Code.INVALID_ARGUMENT, reconfigure(fx, key, "11").code());
    // Not on the allowlist at all: as before.
    assertEquals(Status.Code.PERMISSION_DENIED,
        reconfigure(fx, "dfs.namenode.replication.max-streams", "2").code());
  }

  // ---- GetXAttrs ----

  @Test
  public void getXAttrsNamesAreBoundedByWhatAFileCanCarry() throws Exception {
    HostBoundsFixture fx = new HostBoundsFixture(new Configuration(false));
    fx.answers.put("getXAttrs", args -> Collections.emptyList());
    GetXAttrsRequest.Builder many = GetXAttrsRequest.newBuilder().setPath("/f").setUser("alice");
    for (int i = 0; i < 33; i++) {
      many.addNames("user.x" + i);
    }
    HostBoundsFixture.Answered<GetXAttrsResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.getXAttrs(many.build(), a);
    assertEquals(Status.Code.INVALID_ARGUMENT, a.code());
    assertTrue(a.message(), a.message().contains("dfs.namenode.fs-limits.max-xattrs-per-inode"));
    assertTrue("refused before the NameNode was asked", fx.calls.isEmpty());
    GetXAttrsRequest.Builder ok = GetXAttrsRequest.newBuilder().setPath("/f").setUser("alice");
    for (int i = 0; i < 32; i++) {
      ok.addNames("user.x" + i);
    }
    a = new HostBoundsFixture.Answered<>();
    fx.service.getXAttrs(ok.build(), a);
    assertEquals(Status.Code.OK, a.code());
  }

  @Test
  public void defaults() {
    HookConf hc = new HookConf(new Configuration(false), HookConf.NAMENODE_BINARY);
    assertEquals(4 << 20, hc.hostMaxMessageBytes);
    assertEquals(1000, hc.listMaxEntries);
    assertEquals(8, hc.setReplicationsThreads);
    assertEquals(8192, hc.setReplicationsQueue);
    assertEquals(60_000, hc.setReplicationsTimeoutMs);
    assertEquals(5, hc.lockMaxHoldMs);
    assertEquals(32, hc.maxXAttrsPerInode);
    try {
      NameNodeHostService.checkPathLength("X", "/" + "a".repeat(8000));
      fail("a path over 8000 characters was accepted");
    } catch (IllegalArgumentException e) {
      assertEquals(Status.Code.INVALID_ARGUMENT, code(e));
    }
    NameNodeHostService.checkPathLength("X", "/" + "a".repeat(7999));
  }
}
