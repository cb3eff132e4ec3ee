package io.newtricks.hadoop;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
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
 * DataNode. {@link Topology} replaces the shuffle with a rotation: the n-th open of a file
 * starts its block j at replica (n + j) mod k of the block's equidistant replicas (in a
 * canonical order), so R readers get each replica R/k times (within one), and the readers of
 * any one block at any moment are spread too. (A counter shared by all blocks with the same
 * replica set would give the j-th block of the n-th open the value 2n + j for two-block files:
 * every first block on the even replicas, a convoy.) Locality is kept: only replicas at the
 * same distance are reordered.
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

  /** Puts the list in a canonical order, then rotates it by the set's next counter value. */
  static <T extends Node> void rotate(List<T> list) {
    if (list.size() < 2) {
      return;
    }
    list.sort(Comparator.comparing(Node::getNetworkLocation).thenComparing(Node::getName));
    long key = 1125899906842597L;
    for (T n : list) {
      key = 31 * key + n.getName().hashCode();
    }
    if (COUNTERS.size() > MAX_COUNTERS) {
      COUNTERS.clear();
    }
    long[] seq = OPEN_SEQ.get();
    long n;
    if (seq[0] >= 0) {
      n = seq[0] + seq[1]++;
    } else {
      n = COUNTERS.computeIfAbsent(key, k -> new AtomicLong()).getAndIncrement();
    }
    Collections.rotate(list, (int) -(n % list.size()));
  }

  /** Notes an open of src on this thread, numbered per path if it is rotated. */
  static void noteOpen(String src) {
    OPENING.set(src);
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
    OPEN_SEQ.get()[0] = -1;
  }

  /** For tests: forget every counter. */
  static void resetCounters() {
    COUNTERS.clear();
    OPENS.clear();
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
      return BalancedReads::rotate;
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
