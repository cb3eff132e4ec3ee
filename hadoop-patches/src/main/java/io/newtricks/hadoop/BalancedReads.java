package io.newtricks.hadoop;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.hdfs.net.DFSNetworkTopology;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenSecretManager;
import org.apache.hadoop.hdfs.server.namenode.HdfsAuditLogger;
import org.apache.hadoop.ipc.CallerContext;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Balanced reads for plain HDFS clients. The NameNode sorts each block's replicas by network
 * distance from the reader and shuffles the equidistant ones; every client (Java DFSClient,
 * colinmarc/hdfs) reads from the first. With k replicas and R readers, a random choice leaves
 * the busiest replica with well above R/k readers, and a storm's barrier is set by the busiest
 * DataNode. {@link Topology} replaces the shuffle for the files of a hint: each open of a file
 * gives its block j, first, the equidistant replica that was given first least often for that
 * block, and among those the DataNode given first least often for any hinted block lately
 * (assignments decay with a {@value #DECAY_SECONDS} s time constant). So the readers of any one
 * block are spread over its replicas within one, and the R mod k readers a block cannot spread
 * evenly land where the other blocks put the fewest. (A fixed rotation, (n + j) mod k for the n-th
 * open, spreads each block but sends every file's extra readers to the same k - 1 DataNodes: with
 * 32 readers, 12 replicas and four two-block files, 24 block reads on the busiest DataNode
 * against 21.3 on average, 1.125x. A counter shared by all blocks with the same replica set gave
 * the j-th block of the n-th open the value 2n + j for two-block files: every first block on the
 * even replicas, a convoy.) A replica new to a block (copied during the storm) or a DataNode
 * new to the totals starts level with the least-used one, so it is not flooded. Locality is
 * kept: only replicas at the same distance are reordered.
 *
 * <p>Enable on the NameNode:
 *
 * <pre>
 * dfs.net.topology.impl = io.newtricks.hadoop.BalancedReads$Topology
 * dfs.namenode.audit.loggers = default,io.newtricks.hadoop.AuditForwarder,io.newtricks.hadoop.BalancedReads$AuditHook
 * newtricks.balanced-reads.scope = hinted   (or "all")
 * </pre>
 *
 * <p>With scope "hinted" only reads of the files namenode-ext holds in a hot-file hint are
 * rotated (the others keep Hadoop's shuffle). The sort itself does not see the file, so {@link
 * AuditHook} notes the path of each {@code open} on the RPC handler thread: FSNamesystem calls
 * the audit loggers synchronously before it sorts the located blocks on the same thread (checked
 * in the 3.4.2 byte code of FSNamesystem.getBlockLocations). If a secondary sort is configured
 * ({@code dfs.namenode.read.considerLoad}, {@code considerStorageType}) it is left in charge.
 */
public final class BalancedReads {
  /** Configuration key of the scope: "hinted" (default) or "all". */
  public static final String SCOPE_KEY = "newtricks.balanced-reads.scope";

  private static volatile Set<String> hinted = Collections.emptySet();
  private static volatile boolean topologyInstalled;
  private static volatile boolean auditHookInstalled;
  private static volatile boolean scopeAll;
  private static final ThreadLocal<String> OPENING = new ThreadLocal<>();
  /** For the open noted on this thread: its sequence number per path (-1: none) and the
   * index of the next block sort. */
  private static final ThreadLocal<long[]> OPEN_SEQ = ThreadLocal.withInitial(() -> new long[] {-1, 0});
  private static final ConcurrentHashMap<String, AtomicLong> OPENS = new ConcurrentHashMap<>();

  /** Bound on the rotation counters kept; past it they start over (balance is per window). */
  private static final int MAX_COUNTERS = 1 << 16;
  private static final ConcurrentHashMap<Long, AtomicLong> COUNTERS = new ConcurrentHashMap<>();

  /** Time constant of the per-DataNode totals, seconds. */
  static final int DECAY_SECONDS = 60;

  private static final Object LOCK = new Object();
  /** Per block (path and index in the open's answer): how often each DataNode was given first. */
  private static final Map<String, Map<String, Long>> PER_BLOCK = new HashMap<>();
  /** Per DataNode: {decayed count of hinted blocks given first, at nanoTime}. */
  private static final Map<String, double[]> TOTALS = new HashMap<>();
  /**
   * The DataNode this thread gave first for the previous block of its open, counted in the totals
   * when the open's next block is sorted. The NameNode sorts an answer's last block a second time
   * (LocatedBlocks.getLastLocatedBlock, which clients of complete files do not read from), so
   * the last sort of an open is never counted.
   */
  private static final ThreadLocal<String[]> PENDING = ThreadLocal.withInitial(() -> new String[1]);

  private BalancedReads() {}

  /** Replaces the hinted paths (absolute, clean). */
  static void setHinted(Collection<String> paths) {
    hinted = Collections.unmodifiableSet(new HashSet<>(paths));
  }

  static boolean topologyInstalled() {
    return topologyInstalled;
  }

  static boolean auditHookInstalled() {
    return auditHookInstalled;
  }

  static String scope() {
    return scopeAll ? "all" : "hinted";
  }

  /**
   * Whether the sort running on this thread should rotate. The noted open stays until the next
   * audited call on this thread replaces it: one open sorts every block of the file.
   */
  static boolean rotateCurrent() {
    String src = OPENING.get();
    if (scopeAll) {
      return true;
    }
    return src != null && hinted.contains(src);
  }

  private static final Comparator<Node> CANONICAL =
      Comparator.comparing(Node::getNetworkLocation).thenComparing(Node::getName);

  /**
   * Without a noted open (scope "all" and a sort that is not an open's): puts the list in a
   * canonical order, then rotates it by the replica set's next counter value.
   */
  static <T extends Node> void rotate(List<T> list) {
    if (list.size() < 2) {
      return;
    }
    list.sort(CANONICAL);
    long key = 1125899906842597L;
    for (T n : list) {
      key = 31 * key + n.getName().hashCode();
    }
    if (COUNTERS.size() > MAX_COUNTERS) {
      COUNTERS.clear();
    }
    long n = COUNTERS.computeIfAbsent(key, k -> new AtomicLong()).getAndIncrement();
    Collections.rotate(list, (int) -(n % list.size()));
  }

  /** One block's sort within a noted open: the key of the block, whether the group is its first. */
  static final class BlockSort<T extends Node> implements Consumer<List<T>> {
    private final String block;
    private boolean first = true;

    BlockSort(String block) {
      this.block = block;
    }

    @Override
    public void accept(List<T> list) {
      balance(list, block, first);
      first = false;
    }
  }

  /** The sort of the next block of the open noted on this thread, or null if none is noted. */
  static <T extends Node> Consumer<List<T>> nextBlockSort() {
    String src = OPENING.get();
    long[] seq = OPEN_SEQ.get();
    if (src == null || seq[0] < 0) {
      return null;
    }
    return new BlockSort<>(src + "#" + seq[1]++);
  }

  private static double decayed(double[] t, long now) {
    return t[0] * Math.exp(-(now - (long) t[1]) / (DECAY_SECONDS * 1e9));
  }

  /**
   * Orders one group of equidistant replicas of a block: fewest times given first for this block,
   * then lowest decayed total, then canonical order. For the nearest group (first) the winner is
   * counted: at once for the block, and in the totals when the open's next block is sorted.
   */
  static <T extends Node> void balance(List<T> list, String block, boolean first) {
    list.sort(CANONICAL);
    long now = System.nanoTime();
    String[] pending = PENDING.get();
    synchronized (LOCK) {
      if (pending[0] != null) {
        double[] t = TOTALS.get(pending[0]);
        if (t != null) {
          t[0] = decayed(t, now) + 1;
          t[1] = now;
        }
        pending[0] = null;
      }
      if (list.size() < 2) {
        return;
      }
      if (PER_BLOCK.size() > MAX_COUNTERS) {
        PER_BLOCK.clear();
      }
      if (TOTALS.size() > MAX_COUNTERS) {
        TOTALS.clear();
      }
      Map<String, Long> counts = PER_BLOCK.computeIfAbsent(block, k -> new HashMap<>());
      long minCount = Long.MAX_VALUE;
      double minTotal = Double.MAX_VALUE;
      for (T n : list) {
        Long c = counts.get(n.getName());
        if (c != null) {
          minCount = Math.min(minCount, c);
        }
        double[] t = TOTALS.get(n.getName());
        if (t != null) {
          minTotal = Math.min(minTotal, decayed(t, now));
        }
      }
      Map<String, Double> totals = new HashMap<>();
      long startCount = minCount == Long.MAX_VALUE ? 0 : minCount;
      double startTotal = minTotal == Double.MAX_VALUE ? 0 : minTotal;
      for (T n : list) {
        counts.putIfAbsent(n.getName(), startCount);
        double[] t = TOTALS.get(n.getName());
        if (t == null) {
          t = new double[] {startTotal, now};
          TOTALS.put(n.getName(), t);
        }
        totals.put(n.getName(), decayed(t, now));
      }
      list.sort(Comparator.<T>comparingLong(n -> counts.get(n.getName()))
          .thenComparingDouble(n -> totals.get(n.getName())));
      // Only a choice among equidistant replicas is counted: a reader local to a replica reads
      // it whatever the order (it would otherwise skew the choice for the far readers).
      if (first && list.size() >= 2) {
        counts.merge(list.get(0).getName(), 1L, Long::sum);
        pending[0] = list.get(0).getName();
      }
    }
  }

  /** Notes an open of src on this thread, numbered per path if it is rotated. */
  static void noteOpen(String src) {
    OPENING.set(src);
    PENDING.get()[0] = null;
    long[] seq = OPEN_SEQ.get();
    seq[1] = 0;
    if (scopeAll || hinted.contains(src)) {
      if (OPENS.size() > MAX_COUNTERS) {
        OPENS.clear();
      }
      seq[0] = OPENS.computeIfAbsent(src, k -> new AtomicLong()).getAndIncrement();
    } else {
      seq[0] = -1;
    }
  }

  static void forgetOpen() {
    OPENING.remove();
    PENDING.get()[0] = null;
    OPEN_SEQ.get()[0] = -1;
  }

  /** For tests: forget every counter. */
  static void resetCounters() {
    COUNTERS.clear();
    OPENS.clear();
    synchronized (LOCK) {
      PER_BLOCK.clear();
      TOTALS.clear();
    }
    forgetOpen();
  }

  /** The NameNode's network topology with rotation instead of shuffle among equidistant replicas. */
  public static class Topology extends DFSNetworkTopology implements Configurable {
    private Configuration conf;

    public Topology() {
      topologyInstalled = true;
    }

    @Override
    public void setConf(Configuration c) {
      this.conf = c;
      if (c != null) {
        scopeAll = "all".equalsIgnoreCase(c.getTrimmed(SCOPE_KEY, "hinted"));
      }
    }

    @Override
    public Configuration getConf() {
      return conf;
    }

    @Override
    public <T extends Node> void sortByDistance(Node reader, T[] nodes, int activeLen,
        Consumer<List<T>> secondarySort) {
      super.sortByDistance(reader, nodes, activeLen, pick(secondarySort));
    }

    @Override
    public <T extends Node> void sortByDistanceUsingNetworkLocation(Node reader, T[] nodes,
        int activeLen, Consumer<List<T>> secondarySort) {
      super.sortByDistanceUsingNetworkLocation(reader, nodes, activeLen, pick(secondarySort));
    }

    private static <T extends Node> Consumer<List<T>> pick(Consumer<List<T>> secondarySort) {
      boolean rotate = rotateCurrent();
      if (secondarySort != null || !rotate) {
        return secondarySort;
      }
      Consumer<List<T>> block = nextBlockSort();
      return block != null ? block : BalancedReads::rotate;
    }
  }

  /**
   * Audit logger that notes the path of each successful {@code open} for the sort that follows
   * on the same thread. It never throws and never blocks.
   */
  public static class AuditHook extends HdfsAuditLogger {
    @Override
    public void initialize(Configuration conf) {
      auditHookInstalled = true;
    }

    @Override
    public void logAuditEvent(boolean succeeded, String userName, InetAddress addr, String cmd,
        String src, String dst, FileStatus stat, CallerContext callerContext,
        UserGroupInformation ugi, DelegationTokenSecretManager dtSecretManager) {
      try {
        if (succeeded && "open".equals(cmd) && src != null) {
          noteOpen(src);
        } else {
          forgetOpen();
        }
      } catch (Throwable t) {
        // Never fail a client call.
      }
    }

    @Override
    public void logAuditEvent(boolean succeeded, String userName, InetAddress addr, String cmd,
        String src, String dst, FileStatus stat, UserGroupInformation ugi,
        DelegationTokenSecretManager dtSecretManager) {
      logAuditEvent(succeeded, userName, addr, cmd, src, dst, stat, null, ugi, dtSecretManager);
    }
  }

  /** For tests: the current hinted set. */
  static List<String> hintedForTest() {
    return new ArrayList<>(hinted);
  }
}
