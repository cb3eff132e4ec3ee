package io.newtricks.hadoop.supervise;

import java.io.File;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;

/**
 * Typed configuration of the hooks, read once from the daemon's Configuration. Each field names
 * the hdfs-site.xml key it comes from; defaults are the constants next to it. Public, with its
 * fields, because every part of the hook (supervisor, host services, event stream) reads it.
 */
public final class HookConf {
  /** Path of the Go co-process for a NameNode; unset disables the NameNode extension. */
  public static final String NAMENODE_BINARY = "newtricks.namenode.ext.binary";
  /** Path of the Go co-process for a DataNode; unset disables the DataNode extension. */
  public static final String DATANODE_BINARY = "newtricks.datanode.ext.binary";
  /** Directory for the go-plugin and host unix sockets (created 0700). */
  public static final String SOCKET_DIR = "newtricks.ext.socket.dir";
  /** Directory of newtricks-&lt;kind&gt;-ext.log (co-process stderr/stdout). */
  public static final String LOG_DIR = "newtricks.ext.log.dir";
  public static final String HANDSHAKE_TIMEOUT_MS = "newtricks.ext.handshake.timeout.ms";
  public static final String HEALTH_INTERVAL_MS = "newtricks.ext.health.interval.ms";
  public static final String BACKOFF_INITIAL_MS = "newtricks.ext.restart.backoff.initial.ms";
  public static final String BACKOFF_MAX_MS = "newtricks.ext.restart.backoff.max.ms";
  /** How long a child gets to exit after GRPCController/Shutdown before it is killed. */
  public static final String SHUTDOWN_GRACE_MS = "newtricks.ext.shutdown.grace.ms";
  /** Threads serving host gRPC calls from the co-process. */
  public static final String HOST_HANDLERS = "newtricks.host.handlers";
  /**
   * Host calls admitted beyond the running ones; more are refused at once with
   * RESOURCE_EXHAUSTED, so a flooding co-process cannot queue unbounded work in the daemon.
   */
  public static final String HOST_QUEUE = "newtricks.host.queue";
  /**
   * Largest request the host services accept, bytes (gRPC's default, made explicit): every
   * string and list of a request is bounded by it before anything else looks at it.
   */
  public static final String HOST_MAX_MESSAGE_BYTES = "newtricks.host.max-message-bytes";
  public static final int DEFAULT_HOST_MAX_MESSAGE_BYTES = 4 << 20;
  /**
   * Entries of one ListStatus page at most (a request's limit is clamped to it): HDFS's own
   * dfs.ls.limit default, so a page is one getListing of a default NameNode.
   */
  public static final String LIST_MAX_ENTRIES = "newtricks.host.list.max-entries";
  public static final int DEFAULT_LIST_MAX_ENTRIES = 1000;
  /**
   * Paths SetBalancedReads accepts at most: the hot files of newtricks.hotspot.max-active-hints
   * (16) hints of newtricks.hotspot.max-files (10000) each, the hotspot's defaults.
   */
  public static final String BALANCED_READS_MAX_PATHS = "newtricks.host.balanced-reads.max-paths";
  public static final int DEFAULT_BALANCED_READS_MAX_PATHS = 160_000;
  /** Threads applying the changes of SetReplications batches (shared by all calls). */
  public static final String SET_REPLICATIONS_THREADS = "newtricks.host.setreplications.threads";
  /**
   * Changes of SetReplications batches admitted at once (running or waiting for a thread); a
   * batch that does not fit is refused whole with RESOURCE_EXHAUSTED before any of it runs.
   */
  public static final String SET_REPLICATIONS_QUEUE = "newtricks.host.setreplications.queue";
  /**
   * How long a SetReplications call waits for its changes; changes still running then answer
   * DEADLINE_EXCEEDED (outcome unknown), changes not started RESOURCE_EXHAUSTED (not applied).
   */
  public static final String SET_REPLICATIONS_TIMEOUT_MS = "newtricks.host.setreplications.timeout.ms";
  /**
   * Longest hold of the namesystem read lock by one slice of InspectFiles or GetQuotaUsage
   * (ms): the call releases and takes it again between blocks or paths, so a waiting writer
   * (and every RPC queued behind it) goes first.
   */
  public static final String LOCK_MAX_HOLD_MS = "newtricks.host.lock.max-hold.ms";
  /**
   * newtricks.host.reconfigure.max.&lt;key&gt;: the largest value Reconfigure may set for an
   * allowed key (values are integers from 1). Keys of newtricks.host.reconfigure.allowed beyond
   * the three defaults need one, or Reconfigure refuses them.
   */
  public static final String RECONFIGURE_MAX_PREFIX = "newtricks.host.reconfigure.max.";
  /** Default ceilings: 4x the values namenode-ext's hotspot boosts them to by default. */
  static final Map<String, Integer> DEFAULT_RECONFIGURE_MAX;

  static {
    Map<String, Integer> m = new TreeMap<>();
    m.put("dfs.namenode.replication.max-streams", 256);
    m.put("dfs.namenode.replication.max-streams-hard-limit", 256);
    m.put("dfs.namenode.replication.work.multiplier.per.iteration", 64);
    DEFAULT_RECONFIGURE_MAX = java.util.Collections.unmodifiableMap(m);
  }

  /** The only NameNode keys Reconfigure may change (comma-separated). */
  public static final String RECONFIGURE_ALLOWED = "newtricks.host.reconfigure.allowed";
  public static final String DEFAULT_RECONFIGURE_ALLOWED =
      "dfs.namenode.replication.max-streams,dfs.namenode.replication.max-streams-hard-limit,"
      + "dfs.namenode.replication.work.multiplier.per.iteration";
  /**
   * xattr name prefixes a service call (host.proto: service=true, run as the daemon) may read,
   * write or require as a marker (comma-separated). The hotspot's
   * newtricks.hotspot.state.xattr-prefix is added when it is set.
   */
  public static final String SERVICE_XATTR_PREFIXES = "newtricks.host.service.xattr-prefixes";
  public static final String DEFAULT_SERVICE_XATTR_PREFIXES = "user.newtricks.";
  /** Bound of the audit queue; a full queue drops (and counts) instead of blocking. */
  public static final String AUDIT_QUEUE_CAPACITY = "newtricks.audit.queue.capacity";
  /**
   * (cmd, src) pairs the audit repeat hold (EventFilter.audit_min_repeats) tracks at most;
   * beyond, records of untracked pairs are forwarded directly (and counted). 0 (or less): hold
   * nothing.
   */
  public static final String AUDIT_HOLD_MAX = "newtricks.events.audit.hold.max";
  public static final String BATCH_MAX = "newtricks.events.batch.max";
  public static final String BATCH_LINGER_MS = "newtricks.events.linger.ms";
  public static final String DELIVER_TIMEOUT_MS = "newtricks.events.deliver.timeout.ms";
  public static final String INOTIFY_POLL_MS = "newtricks.inotify.poll.ms";
  /** Namespace events read from the edit log but not yet acknowledged, at most. */
  public static final String INOTIFY_MAX_PENDING = "newtricks.inotify.max.pending";
  /** The tailer spends at most 1/factor of one core re-reading the edit log (0: unthrottled). */
  public static final String INOTIFY_COST_FACTOR = "newtricks.inotify.cost.factor";
  /**
   * Events one edit-log read may return: raises the NameNode's
   * dfs.namenode.inotify.max.events.per.rpc (default 1000) to this if it is lower, since every
   * read re-scans the in-progress segment and small reads make draining a burst quadratic.
   */
  public static final String INOTIFY_EVENTS_PER_READ = "newtricks.inotify.events.per.read";

  /**
   * Where the NameNode hook keeps the event stream's resume point (the last txid the co-process
   * made durable) and subscription. Default ${hadoop.tmp.dir}/newtricks-state/namenode-events.properties.
   */
  public static final String STATE_FILE = "newtricks.events.state.file";
  /** How often, at most, the resume point is written (ms). */
  public static final String STATE_PERSIST_MS = "newtricks.events.state.persist.ms";
  /** Events the event journal holds for the tailer; beyond, it pauses and catches up. */
  public static final String JOURNAL_QUEUE_CAPACITY = "newtricks.events.journal.queue.capacity";
  /** The event journal rolls the edit log to read a hole at most this often (ms). */
  public static final String ROLL_MIN_INTERVAL_MS = "newtricks.events.roll.min.interval.ms";
  /** Tests only: the event journal's writes throw, as a failing journal would. */
  public static final String JOURNAL_INJECT_FAILURE = "newtricks.events.journal.inject-failure";

  /** HDFS keys forwarded to the co-process in Configure, besides every newtricks.* key. */
  static final String[] FORWARDED_HDFS_KEYS = {
    "fs.defaultFS", "dfs.permissions.enabled", "dfs.permissions.superusergroup",
    "dfs.block.access.token.enable", "dfs.namenode.rpc-address", "dfs.datanode.address",
    "hadoop.tmp.dir", "dfs.replication",
    // The co-processes pick their public API's authenticator and bind address from these.
    "hadoop.security.authentication", "dfs.datanode.ipc.address",
    // namenode-ext's hotspot planner: HDFS limits it must respect and the replication pace.
    "dfs.replication.max", "dfs.namenode.fs-limits.max-xattr-size",
    "dfs.namenode.redundancy.interval.seconds",
  };

  public static final int DEFAULT_AUDIT_QUEUE_CAPACITY = 65536;
  public static final int DEFAULT_AUDIT_HOLD_MAX = 65536;

  /**
   * The audit logger's class, as admins name it in dfs.namenode.audit.loggers (a configured
   * name, so it never moves; AuditForwarderTest checks it against the class).
   */
  public static final String AUDIT_FORWARDER_CLASS = "io.newtricks.hadoop.AuditForwarder";

  public final String binary;          // empty when unset
  public final File socketDir;
  public final File logDir;
  public final long handshakeTimeoutMs;
  public final long healthIntervalMs;
  public final long backoffInitialMs;
  public final long backoffMaxMs;
  public final long shutdownGraceMs;
  public final int hostHandlers;
  public final int hostQueue;
  public final java.util.Set<String> reconfigureAllowed;
  /** Per allowed key with a ceiling: the largest value Reconfigure may set. */
  public final Map<String, Integer> reconfigureMax;
  /**
   * Per allowed key: its value in the daemon's configuration when the hook started (absent if
   * unset). Reconfigure may always put that back, even above the ceiling.
   */
  public final Map<String, String> reconfigureConfigured;
  public final int hostMaxMessageBytes;
  public final int listMaxEntries;
  public final int balancedReadsMaxPaths;
  public final int setReplicationsThreads;
  public final int setReplicationsQueue;
  public final long setReplicationsTimeoutMs;
  public final long lockMaxHoldMs;
  /** dfs.namenode.fs-limits.max-xattrs-per-inode: more names than that in one GetXAttrs is refused. */
  public final int maxXAttrsPerInode;
  public final java.util.Set<String> serviceXAttrPrefixes;
  public final int batchMax;
  public final long batchLingerMs;
  public final long deliverTimeoutMs;
  public final long inotifyPollMs;
  public final int inotifyMaxPending;
  public final int inotifyCostFactor;
  public final int inotifyEventsPerRead;
  public final File stateFile;
  public final long statePersistMs;
  public final long rollMinIntervalMs;
  /** AuditForwarder is in dfs.namenode.audit.loggers. */
  public final boolean auditForwarderConfigured;

  public HookConf(Configuration conf, String binaryKey) {
    this.binary = conf.getTrimmed(binaryKey, "");
    String tmp = conf.get("hadoop.tmp.dir", System.getProperty("java.io.tmpdir"));
    this.socketDir = new File(conf.getTrimmed(SOCKET_DIR, tmp + "/newtricks"));
    String hadoopLogDir = System.getProperty("hadoop.log.dir");
    String defaultLogDir =
        hadoopLogDir != null && !hadoopLogDir.isEmpty() ? hadoopLogDir : socketDir.getPath();
    this.logDir = new File(conf.getTrimmed(LOG_DIR, defaultLogDir));
    this.handshakeTimeoutMs = conf.getLong(HANDSHAKE_TIMEOUT_MS, 10_000);
    this.healthIntervalMs = conf.getLong(HEALTH_INTERVAL_MS, 1_000);
    this.backoffInitialMs = conf.getLong(BACKOFF_INITIAL_MS, 500);
    this.backoffMaxMs = conf.getLong(BACKOFF_MAX_MS, 30_000);
    this.shutdownGraceMs = conf.getLong(SHUTDOWN_GRACE_MS, 2_000);
    this.hostHandlers = conf.getInt(HOST_HANDLERS, 8);
    this.hostQueue = conf.getInt(HOST_QUEUE, 256);
    this.reconfigureAllowed = java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(
        org.apache.hadoop.util.StringUtils.getTrimmedStringCollection(
            conf.get(RECONFIGURE_ALLOWED, DEFAULT_RECONFIGURE_ALLOWED))));
    Map<String, Integer> max = new TreeMap<>();
    Map<String, String> configured = new TreeMap<>();
    for (String k : reconfigureAllowed) {
      Integer dflt = DEFAULT_RECONFIGURE_MAX.get(k);
      int v = conf.getInt(RECONFIGURE_MAX_PREFIX + k, dflt == null ? -1 : dflt);
      if (v > 0) {
        max.put(k, v);
      }
      String c = conf.get(k);
      if (c != null) {
        configured.put(k, c);
      }
    }
    this.reconfigureMax = java.util.Collections.unmodifiableMap(max);
    this.reconfigureConfigured = java.util.Collections.unmodifiableMap(configured);
    this.hostMaxMessageBytes = Math.max(64 << 10,
        conf.getInt(HOST_MAX_MESSAGE_BYTES, DEFAULT_HOST_MAX_MESSAGE_BYTES));
    this.listMaxEntries = Math.max(1, conf.getInt(LIST_MAX_ENTRIES, DEFAULT_LIST_MAX_ENTRIES));
    this.balancedReadsMaxPaths = Math.max(0,
        conf.getInt(BALANCED_READS_MAX_PATHS, DEFAULT_BALANCED_READS_MAX_PATHS));
    this.setReplicationsThreads = Math.max(1, conf.getInt(SET_REPLICATIONS_THREADS, 8));
    this.setReplicationsQueue = Math.max(1, conf.getInt(SET_REPLICATIONS_QUEUE, 8192));
    this.setReplicationsTimeoutMs = Math.max(1, conf.getLong(SET_REPLICATIONS_TIMEOUT_MS, 60_000));
    this.lockMaxHoldMs = Math.max(0, conf.getLong(LOCK_MAX_HOLD_MS, 5));
    this.maxXAttrsPerInode = conf.getInt(
        org.apache.hadoop.hdfs.DFSConfigKeys.DFS_NAMENODE_MAX_XATTRS_PER_INODE_KEY,
        org.apache.hadoop.hdfs.DFSConfigKeys.DFS_NAMENODE_MAX_XATTRS_PER_INODE_DEFAULT);
    java.util.Set<String> prefixes = new java.util.TreeSet<>(org.apache.hadoop.util.StringUtils
        .getTrimmedStringCollection(conf.get(SERVICE_XATTR_PREFIXES, DEFAULT_SERVICE_XATTR_PREFIXES)));
    String hotspotPrefix = conf.getTrimmed("newtricks.hotspot.state.xattr-prefix", "");
    if (!hotspotPrefix.isEmpty()) {
      prefixes.add(hotspotPrefix);
    }
    this.serviceXAttrPrefixes = java.util.Collections.unmodifiableSet(prefixes);
    this.batchMax = conf.getInt(BATCH_MAX, 1024);
    this.batchLingerMs = conf.getLong(BATCH_LINGER_MS, 50);
    this.deliverTimeoutMs = conf.getLong(DELIVER_TIMEOUT_MS, 2_000);
    this.inotifyPollMs = conf.getLong(INOTIFY_POLL_MS, 100);
    this.inotifyMaxPending = conf.getInt(INOTIFY_MAX_PENDING, 10_000);
    this.inotifyCostFactor = conf.getInt(INOTIFY_COST_FACTOR, 20);
    this.inotifyEventsPerRead = conf.getInt(INOTIFY_EVENTS_PER_READ, 20_000);
    this.stateFile = stateFile(conf);
    this.statePersistMs = conf.getLong(STATE_PERSIST_MS, 1_000);
    this.rollMinIntervalMs = conf.getLong(ROLL_MIN_INTERVAL_MS, 5_000);
    this.auditForwarderConfigured = conf.get("dfs.namenode.audit.loggers", "")
        .contains(AUDIT_FORWARDER_CLASS);
  }

  /** The state file's path from conf (the event journal reads it before any hook exists). */
  public static File stateFile(Configuration conf) {
    String tmp = conf.get("hadoop.tmp.dir", System.getProperty("java.io.tmpdir"));
    return new File(conf.getTrimmed(STATE_FILE,
        tmp + "/newtricks-state/namenode-events.properties"));
  }

  /** The conf map pushed to the co-process: every newtricks.* key plus FORWARDED_HDFS_KEYS. */
  public static Map<String, String> forwarded(Configuration conf) {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> e : conf) {
      if (e.getKey().startsWith("newtricks.")) {
        String v = conf.get(e.getKey()); // substituted value
        if (v != null) {
          out.put(e.getKey(), v);
        }
      }
    }
    for (String k : FORWARDED_HDFS_KEYS) {
      String v = conf.get(k);
      if (v != null) {
        out.put(k, v);
      }
    }
    return out;
  }

  /** The binary key for a daemon kind ("namenode" or "datanode"). */
  public static String binaryKey(String kind) {
    return kind.equals("namenode") ? NAMENODE_BINARY : DATANODE_BINARY;
  }
}
