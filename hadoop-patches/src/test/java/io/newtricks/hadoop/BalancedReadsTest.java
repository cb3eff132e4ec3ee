package io.newtricks.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.net.DFSNetworkTopology;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.net.NodeBase;
import org.junit.Test;

public class BalancedReadsTest {
  private static Node[] replicas(int k) {
    Node[] n = new Node[k];
    for (int i = 0; i < k; i++) {
      n[i] = new NodeBase("127.0.0.1:" + (9800 + i), "/default-rack");
    }
    return n;
  }

  private static DFSNetworkTopology topology(String scope) {
    Configuration conf = new Configuration(false);
    conf.set("dfs.net.topology.impl", BalancedReads.Topology.class.getName());
    conf.set(BalancedReads.SCOPE_KEY, scope);
    return DFSNetworkTopology.getInstance(conf);
  }

  /** R sorts of one replica set put each replica first R/k times: the busiest gets ceil(R/k). */
  @Test
  public void rotationServesEveryReplicaEqually() {
    DFSNetworkTopology t = topology("all");
    assertTrue(t instanceof BalancedReads.Topology);
    BalancedReads.resetCounters();
    Node reader = new NodeBase("/default-rack/10.0.0.9");
    Node[] base = replicas(12);
    Map<String, Integer> first = new HashMap<>();
    int sorts = 256;
    for (int i = 0; i < sorts; i++) {
      Node[] locs = base.clone();
      java.util.Collections.shuffle(Arrays.asList(locs));
      t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
      first.merge(locs[0].getName(), 1, Integer::sum);
    }
    assertEquals(12, first.size());
    for (int v : first.values()) {
      assertTrue("share " + v, v == sorts / 12 || v == sorts / 12 + 1);
    }
  }

  /**
   * 32 opens of a two-block file whose blocks share one set of 12 replicas: at any block index
   * the readers are spread over all replicas (2 or 3 each), not over every other one.
   */
  @Test
  public void noConvoyAcrossBlocksOfOneOpen() {
    DFSNetworkTopology t = topology("hinted");
    BalancedReads.resetCounters();
    BalancedReads.setHinted(Arrays.asList("/hot/two"));
    BalancedReads.AuditHook hook = new BalancedReads.AuditHook();
    hook.initialize(new Configuration(false));
    Node reader = new NodeBase("/default-rack/10.0.0.9");
    Node[] base = replicas(12);
    java.util.List<Map<String, Integer>> perBlock = Arrays.asList(new HashMap<>(), new HashMap<>());
    for (int i = 0; i < 32; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/two", null, null, null, null);
      for (int b = 0; b < 2; b++) {
        Node[] locs = base.clone();
        java.util.Collections.shuffle(Arrays.asList(locs));
        t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
        perBlock.get(b).merge(locs[0].getName(), 1, Integer::sum);
      }
    }
    for (Map<String, Integer> m : perBlock) {
      assertEquals(12, m.size());
      for (int v : m.values()) {
        assertTrue("share " + v + " in " + m, v == 2 || v == 3);
      }
    }
    BalancedReads.setHinted(Arrays.asList());
    BalancedReads.resetCounters();
  }

  /** Scope "hinted": only an open of a hinted path, noted by the audit hook, is rotated. */
  @Test
  public void hintedScopeRotatesOnlyHintedOpens() {
    DFSNetworkTopology t = topology("hinted");
    BalancedReads.resetCounters();
    BalancedReads.setHinted(Arrays.asList("/hot/a"));
    BalancedReads.AuditHook hook = new BalancedReads.AuditHook();
    hook.initialize(new Configuration(false));
    Node reader = new NodeBase("/default-rack/10.0.0.9");
    Node[] base = replicas(4);
    Map<String, Integer> first = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/a", null, null, null, null);
      Node[] locs = base.clone();
      t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
      first.merge(locs[0].getName(), 1, Integer::sum);
    }
    assertEquals(4, first.size());
    for (int v : first.values()) {
      assertEquals(10, v);
    }
    // Another file, or a non-open command, keeps Hadoop's shuffle: no rotation counter moves.
    hook.logAuditEvent(true, "alice", null, "open", "/cold/b", null, null, null, null);
    assertEquals(false, BalancedReads.rotateCurrent());
    hook.logAuditEvent(true, "alice", null, "listStatus", "/hot/a", null, null, null, null);
    assertEquals(false, BalancedReads.rotateCurrent());
    BalancedReads.setHinted(Arrays.asList());
  }

  /**
   * The bench-hotspot storm: 32 readers open four two-block files (12 replicas each) in their
   * own order, and the NameNode sorts each answer's last block twice. Every block's readers are
   * spread within one (2 or 3 per replica), and the block reads per DataNode over all files are
   * within one of each other (21 or 22; a fixed rotation gives 20..24).
   */
  @Test
  public void totalsBalancedAcrossFiles() {
    DFSNetworkTopology t = topology("hinted");
    BalancedReads.resetCounters();
    java.util.List<String> files = Arrays.asList("/hot/p0", "/hot/p1", "/hot/p2", "/hot/p3");
    BalancedReads.setHinted(files);
    BalancedReads.AuditHook hook = new BalancedReads.AuditHook();
    hook.initialize(new Configuration(false));
    Node reader = new NodeBase("/default-rack/10.0.0.9");
    Node[] base = replicas(12);
    java.util.Random rnd = new java.util.Random(7);
    java.util.List<String> opens = new java.util.ArrayList<>();
    for (int r = 0; r < 32; r++) {
      java.util.List<String> order = new java.util.ArrayList<>(files);
      java.util.Collections.rotate(order, rnd.nextInt(4));
      opens.addAll(order);
    }
    java.util.Collections.shuffle(opens, rnd);
    Map<String, Map<String, Integer>> perBlock = new HashMap<>();
    Map<String, Integer> total = new HashMap<>();
    for (String f : opens) {
      hook.logAuditEvent(true, "alice", null, "open", f, null, null, null, null);
      for (int b = 0; b < 3; b++) { // blocks 0 and 1, then the last block again
        Node[] locs = base.clone();
        java.util.Collections.shuffle(Arrays.asList(locs), rnd);
        t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
        if (b < 2) {
          perBlock.computeIfAbsent(f + b, k -> new HashMap<>()).merge(locs[0].getName(), 1, Integer::sum);
          total.merge(locs[0].getName(), 1, Integer::sum);
        }
      }
    }
    for (Map<String, Integer> m : perBlock.values()) {
      assertEquals(12, m.size());
      for (int v : m.values()) {
        assertTrue("share " + v + " in " + m, v == 2 || v == 3);
      }
    }
    assertEquals(12, total.size());
    for (int v : total.values()) {
      assertTrue("total " + v + " in " + total, v == 21 || v == 22);
    }
    BalancedReads.setHinted(Arrays.asList());
    BalancedReads.resetCounters();
  }

  /** A replica copied after 30 reads of its block starts level with the others, not at 0. */
  @Test
  public void newReplicaIsNotFlooded() {
    DFSNetworkTopology t = topology("hinted");
    BalancedReads.resetCounters();
    BalancedReads.setHinted(Arrays.asList("/hot/one"));
    BalancedReads.AuditHook hook = new BalancedReads.AuditHook();
    hook.initialize(new Configuration(false));
    Node reader = new NodeBase("/default-rack/10.0.0.9");
    Node[] four = replicas(4);
    Node[] three = Arrays.copyOf(four, 3);
    for (int i = 0; i < 30; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/one", null, null, null, null);
      Node[] locs = three.clone();
      t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
    }
    Map<String, Integer> first = new HashMap<>();
    for (int i = 0; i < 8; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/one", null, null, null, null);
      Node[] locs = four.clone();
      t.sortByDistanceUsingNetworkLocation(reader, locs, locs.length, null);
      first.merge(locs[0].getName(), 1, Integer::sum);
    }
    assertEquals(first.toString(), 4, first.size());
    for (int v : first.values()) {
      assertEquals(first.toString(), 2, v);
    }
    BalancedReads.setHinted(Arrays.asList());
    BalancedReads.resetCounters();
  }

  /**
   * Reads from a client on a DataNode's host (its replica alone at distance 0) do not count:
   * 24 far reads after 24 local ones still get 4 from each of 6 replicas (TestHotspot's case).
   */
  @Test
  public void localReadsDoNotSkewFarReads() {
    DFSNetworkTopology t = topology("hinted");
    BalancedReads.resetCounters();
    BalancedReads.setHinted(Arrays.asList("/hot/one"));
    BalancedReads.AuditHook hook = new BalancedReads.AuditHook();
    hook.initialize(new Configuration(false));
    Node[] base = replicas(6);
    for (int i = 0; i < 24; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/one", null, null, null, null);
      for (int b = 0; b < 2; b++) {
        Node[] locs = base.clone();
        t.sortByDistance(base[i % 2], locs, locs.length, null); // local to replica 0 or 1
        assertEquals(base[i % 2], locs[0]);
      }
    }
    Node far = new NodeBase("/default-rack/10.0.0.9");
    Map<String, Integer> first = new HashMap<>();
    for (int i = 0; i < 24; i++) {
      hook.logAuditEvent(true, "alice", null, "open", "/hot/one", null, null, null, null);
      for (int b = 0; b < 2; b++) {
        Node[] locs = base.clone();
        t.sortByDistanceUsingNetworkLocation(far, locs, locs.length, null);
        if (b == 0) {
          first.merge(locs[0].getName(), 1, Integer::sum);
        }
      }
    }
    assertEquals(first.toString(), 6, first.size());
    for (int v : first.values()) {
      assertEquals(first.toString(), 4, v);
    }
    BalancedReads.setHinted(Arrays.asList());
    BalancedReads.resetCounters();
  }
}
