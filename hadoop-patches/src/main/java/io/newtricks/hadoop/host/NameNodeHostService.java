package io.newtricks.hadoop.host;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.CheckAccessRequest;
import io.newtricks.proto.v1.CheckAccessResponse;
import io.newtricks.proto.v1.ContentSummary;
import io.newtricks.proto.v1.DatanodeLoad;
import io.newtricks.proto.v1.DatanodeRef;
import io.newtricks.proto.v1.DatanodeReport;
import io.newtricks.proto.v1.FileStatus;
import io.newtricks.proto.v1.GetBlockLocationsRequest;
import io.newtricks.proto.v1.GetContentSummaryRequest;
import io.newtricks.proto.v1.GetDatanodeReportRequest;
import io.newtricks.proto.v1.GetFileStatusRequest;
import io.newtricks.proto.v1.GetNamesystemStateRequest;
import io.newtricks.proto.v1.GetXAttrsRequest;
import io.newtricks.proto.v1.GetXAttrsResponse;
import io.newtricks.proto.v1.ListStatusRequest;
import io.newtricks.proto.v1.ListStatusResponse;
import io.newtricks.proto.v1.LocatedBlock;
import io.newtricks.proto.v1.LocatedBlocks;
import io.newtricks.proto.v1.NameNodeHostGrpc;
import io.newtricks.proto.v1.NamesystemState;
import io.newtricks.proto.v1.ReconfigureRequest;
import io.newtricks.proto.v1.ReconfigureResponse;
import io.newtricks.proto.v1.RemoveXAttrRequest;
import io.newtricks.proto.v1.RemoveXAttrResponse;
import io.newtricks.proto.v1.SetReplicationRequest;
import io.newtricks.proto.v1.SetReplicationResponse;
import io.newtricks.proto.v1.SetXAttrRequest;
import io.newtricks.proto.v1.SetXAttrResponse;
import io.newtricks.proto.v1.Token;
import io.newtricks.proto.v1.FileInspection;
import io.newtricks.proto.v1.GetQuotaUsageRequest;
import io.newtricks.proto.v1.GetQuotaUsageResponse;
import io.newtricks.proto.v1.InspectFilesRequest;
import io.newtricks.proto.v1.InspectFilesResponse;
import io.newtricks.proto.v1.QuotaDir;
import io.newtricks.proto.v1.ReplicationChange;
import io.newtricks.proto.v1.ReplicationResult;
import io.newtricks.proto.v1.SetBalancedReadsRequest;
import io.newtricks.proto.v1.SetBalancedReadsResponse;
import io.newtricks.proto.v1.SetReplicationsRequest;
import io.newtricks.proto.v1.SetReplicationsResponse;
import java.io.FileNotFoundException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.ReconfigurationException;
import org.apache.hadoop.fs.XAttr;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.XAttrHelper;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.DirectoryListing;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockManager;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.namenode.DirectoryWithQuotaFeature;
import org.apache.hadoop.hdfs.server.namenode.FSDirectory;
import org.apache.hadoop.hdfs.server.namenode.INode;
import org.apache.hadoop.hdfs.server.namenode.INodeDirectory;
import org.apache.hadoop.hdfs.server.namenode.INodeFile;
import org.apache.hadoop.hdfs.server.namenode.QuotaCounts;
import org.apache.hadoop.hdfs.server.namenode.FSNamesystem;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.hdfs.server.namenode.NewtricksConditionalChange;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * NameNodeHost (host.proto): the calls namenode-ext makes back into the NameNode. Each runs the
 * NameNode's own RPC-server code path (so permissions, safe mode and HA state are checked exactly
 * as for a client), as the named user, or, when the request says service=true, as the NameNode
 * itself within the limits host.proto lists for that call. A request that names neither is
 * refused; it never runs as the NameNode by default.
 */
public final class NameNodeHostService extends NameNodeHostGrpc.NameNodeHostImplBase {
  /**
   * What SetBalancedReads steers: the hinted files of the NameNode's replica sort
   * ({@code io.newtricks.hadoop.BalancedReads}, whose classes the NameNode's configuration names,
   * so they stay in that package; the plugin passes it in).
   */
  public interface BalancedReadsControl {
    /** Replaces the hinted paths; answers what is installed and the scope. */
    SetBalancedReadsResponse setHinted(List<String> paths);
  }


  /**
   * Where the service reaches the NameNode: the NameNode itself, or a test's stand-in (the
   * calls that take the namesystem's locks directly still need a real one).
   */
  interface Daemon {
    /** The RPC server's protocols; null while it is not up. */
    NamenodeProtocols rpc();

    /** Null while the namesystem is not loaded. */
    FSNamesystem namesystem();

    /** The NameNode's current value of a key (null: unset). */
    String conf(String key);

    /** NameNode.reconfigureProperty (null value: the default). */
    void reconfigure(String key, String value) throws ReconfigurationException;
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NameNodeHostService.class);
  private final NameNode nn;
  private final Daemon daemon;
  private final HookMetrics metrics;
  private final HookConf hc;
  private final java.util.Set<String> reconfigureAllowed;
  private final java.util.Set<String> servicePrefixes;
  private final BalancedReadsControl balancedReads;
  /** Threads applying the changes of SetReplications batches: bounded admission and wait. */
  private final BatchPool changePool;

  public NameNodeHostService(NameNode nn, HookMetrics metrics, HookConf hc,
      BalancedReadsControl balancedReads) {
    this(nn, new Daemon() {
      @Override
      public NamenodeProtocols rpc() {
        return nn.getRpcServer();
      }

      @Override
      public FSNamesystem namesystem() {
        return nn.getNamesystem();
      }

      @Override
      public String conf(String key) {
        return nn.getConf().get(key);
      }

      @Override
      public void reconfigure(String key, String value) throws ReconfigurationException {
        nn.reconfigureProperty(key, value);
      }
    }, metrics, hc, balancedReads);
  }

  NameNodeHostService(NameNode nn, Daemon daemon, HookMetrics metrics, HookConf hc,
      BalancedReadsControl balancedReads) {
    this.nn = nn;
    this.daemon = daemon;
    this.metrics = metrics;
    this.hc = hc;
    this.reconfigureAllowed = hc.reconfigureAllowed;
    this.servicePrefixes = hc.serviceXAttrPrefixes;
    this.balancedReads = balancedReads;
    this.changePool = new BatchPool("newtricks-setreplications", hc.setReplicationsThreads,
        hc.setReplicationsQueue, hc.setReplicationsTimeoutMs, HookConf.SET_REPLICATIONS_QUEUE);
  }

  private NamenodeProtocols rpc() {
    NamenodeProtocols r = daemon.rpc();
    if (r == null) {
      throw Status.UNAVAILABLE.withDescription("NameNode RPC server not up").asRuntimeException();
    }
    return r;
  }

  private FSNamesystem ns() {
    FSNamesystem n = daemon.namesystem();
    if (n == null) {
      throw Status.UNAVAILABLE.withDescription("namesystem not loaded").asRuntimeException();
    }
    return n;
  }

  /** Refuses a path longer than HDFS allows any (HdfsServerConstants.MAX_PATH_LENGTH). */
  static void checkPathLength(String call, String path) {
    if (path.length() > MAX_PATH_LENGTH) {
      throw new IllegalArgumentException(call + ": a path of " + path.length()
          + " characters, HDFS allows at most " + MAX_PATH_LENGTH);
    }
  }

  static final int MAX_PATH_LENGTH =
      org.apache.hadoop.hdfs.server.common.HdfsServerConstants.MAX_PATH_LENGTH;

  @Override
  public void setReplication(SetReplicationRequest req, StreamObserver<SetReplicationResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getReplication() <= 0 || req.getReplication() > Short.MAX_VALUE) {
        throw new IllegalArgumentException("replication " + req.getReplication());
      }
      HostCalls.userOnly("SetReplication", req.getUser(), req.getService());
      boolean changed = HostCalls.as("SetReplication", req.getUser(), false,
          () -> rpc().setReplication(req.getPath(), (short) req.getReplication()));
      return SetReplicationResponse.newBuilder().setChanged(changed).build();
    });
  }

  @Override
  public void getFileStatus(GetFileStatusRequest req, StreamObserver<FileStatus> out) {
    HostCalls.serve(metrics, out, () -> {
      HdfsFileStatus st = HostCalls.as("GetFileStatus", req.getUser(), req.getService(),
          () -> rpc().getFileInfo(req.getPath()));
      if (st == null) {
        throw new FileNotFoundException("File does not exist: " + req.getPath());
      }
      return toProto(req.getPath(), st);
    });
  }

  /** One getListing of the NameNode (ClientProtocol.getListing without locations). */
  interface Lister {
    DirectoryListing list(String path, byte[] startAfter) throws java.io.IOException;
  }

  @Override
  public void listStatus(ListStatusRequest req, StreamObserver<ListStatusResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      boolean service = userOnly("ListStatus", req.getUser(), req.getService());
      return HostCalls.as("ListStatus", req.getUser(), service,
          () -> listPage(req, hc.listMaxEntries, (p, after) -> rpc().getListing(p, after, false)));
    });
  }

  /**
   * One page of req.path: entries after req.start_after, at most req.limit and never more than
   * bound (0: the bound), from as many getListing calls as that takes (one, unless the
   * NameNode's dfs.ls.limit is below the bound). has_more and last_name say where the next page
   * starts; nothing beyond the page is listed.
   */
  static ListStatusResponse listPage(ListStatusRequest req, int bound, Lister lister)
      throws java.io.IOException {
    if (req.getLimit() < 0) {
      throw new IllegalArgumentException("ListStatus: limit " + req.getLimit() + " is negative");
    }
    if (req.getStartAfter().size() > MAX_PATH_LENGTH) {
      throw new IllegalArgumentException("ListStatus: start_after of " + req.getStartAfter().size()
          + " bytes, longer than any HDFS path (" + MAX_PATH_LENGTH + ")");
    }
    int want = req.getLimit() == 0 ? bound : Math.min(req.getLimit(), bound);
    String path = req.getPath();
    byte[] after = req.getStartAfter().isEmpty() ? HdfsFileStatus.EMPTY_NAME
        : req.getStartAfter().toByteArray();
    ListStatusResponse.Builder b = ListStatusResponse.newBuilder();
    byte[] last = null;
    while (true) {
      DirectoryListing page = lister.list(path, after);
      if (page == null) {
        throw new FileNotFoundException("File " + path + " does not exist.");
      }
      HdfsFileStatus[] part = page.getPartialListing();
      int take = Math.min(part.length, want - b.getEntriesCount());
      for (int i = 0; i < take; i++) {
        HdfsFileStatus st = part[i];
        String name = st.getLocalName();
        // Listing a file returns the file itself with an empty local name.
        b.addEntries(toProto(name.isEmpty() ? path : st.getFullName(path), st));
        last = st.getLocalNameInBytes();
      }
      if (take < part.length) {
        b.setHasMore(true).setRemaining(part.length - take + page.getRemainingEntries());
        break;
      }
      // (An empty partial listing that says more never comes from HDFS; taken as the end, so
      // no caller can loop on it.)
      if (!page.hasMore() || part.length == 0) {
        break;
      }
      if (b.getEntriesCount() >= want) {
        b.setHasMore(true).setRemaining(page.getRemainingEntries());
        break;
      }
      after = page.getLastName();
    }
    if (last != null) {
      b.setLastName(ByteString.copyFrom(last));
    }
    return b.build();
  }

  @Override
  public void getDatanodeReport(GetDatanodeReportRequest req, StreamObserver<DatanodeReport> out) {
    HostCalls.serve(metrics, out, () -> {
      FSNamesystem ns = ns();
      DatanodeInfo[] live = rpc().getDatanodeReport(HdfsConstants.DatanodeReportType.LIVE);
      DatanodeReport.Builder b = DatanodeReport.newBuilder()
          .setDead(ns.getNumDeadDataNodes())
          .setTotalLoad(ns.getTotalLoad())
          .setPendingReconstruction(ns.getPendingReconstructionBlocks())
          .setUnderReplicated(ns.getLowRedundancyBlocks())
          .setSafeMode(ns.isInSafeMode());
      for (DatanodeInfo d : live) {
        DatanodeLoad.Builder l = DatanodeLoad.newBuilder()
            .setUuid(nz(d.getDatanodeUuid()))
            .setHostname(nz(d.getHostName()))
            .setIp(nz(d.getIpAddr()))
            .setXferAddr(nz(d.getXferAddr()))
            .setXceivers(d.getXceiverCount())
            .setCapacity(d.getCapacity())
            .setRemaining(d.getRemaining())
            .setDfsUsed(d.getDfsUsed())
            .setAdminState(d.getAdminState() == null ? "NORMAL" : d.getAdminState().name())
            .setLastUpdateMs(d.getLastUpdate())
            .setInfoAddr(nz(d.getInfoAddr()));
        DatanodeDescriptor desc = ns.getBlockManager().getDatanodeManager()
            .getDatanode(d.getDatanodeUuid());
        if (desc != null) {
          l.setBlocksPendingReplication(desc.getNumberOfReplicateBlocks());
        }
        b.addLive(l);
      }
      return b.build();
    });
  }

  @Override
  public void getBlockLocations(GetBlockLocationsRequest req, StreamObserver<LocatedBlocks> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getOffset() < 0 || req.getLength() < 0) {
        throw new IllegalArgumentException("negative offset or length");
      }
      long len = req.getLength() == 0 ? Long.MAX_VALUE - req.getOffset() : req.getLength();
      // As the user: HDFS checks READ and issues block tokens in that user's name. As the
      // service (lengths, under construction): the answer carries no tokens.
      org.apache.hadoop.hdfs.protocol.LocatedBlocks lbs = HostCalls.as("GetBlockLocations",
          req.getUser(), req.getService(),
          () -> rpc().getBlockLocations(req.getPath(), req.getOffset(), len));
      if (lbs == null) {
        throw new FileNotFoundException("File does not exist: " + req.getPath());
      }
      LocatedBlocks.Builder b = LocatedBlocks.newBuilder()
          .setFileLength(lbs.getFileLength())
          .setUnderConstruction(lbs.isUnderConstruction());
      for (org.apache.hadoop.hdfs.protocol.LocatedBlock lb : lbs.getLocatedBlocks()) {
        b.addBlocks(toProto(lb, !req.getService()));
      }
      org.apache.hadoop.hdfs.protocol.LocatedBlock last = lbs.getLastLocatedBlock();
      if (last != null && !lbs.isLastBlockComplete()) {
        b.addBlocks(toProto(last, !req.getService()));
      }
      return b.build();
    });
  }

  @Override
  public void checkAccess(CheckAccessRequest req, StreamObserver<CheckAccessResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.userOnly("CheckAccess", req.getUser(), req.getService());
      FsAction action = FsAction.valueOf(req.getAction().trim().toUpperCase(Locale.ROOT));
      if (req.getPathsCount() > 0) {
        if (req.getPathsCount() > MAX_BATCH) {
          throw new IllegalArgumentException(req.getPathsCount() + " paths, at most " + MAX_BATCH);
        }
        // Batch: one doAs, one result per path; a denied path does not fail the others.
        return HostCalls.as("CheckAccess", req.getUser(), false, () -> {
          CheckAccessResponse.Builder b = CheckAccessResponse.newBuilder();
          for (String p : req.getPathsList()) {
            io.newtricks.proto.v1.AccessResult.Builder r = io.newtricks.proto.v1.AccessResult.newBuilder();
            try {
              rpc().checkAccess(p, action);
            } catch (Throwable t) {
              io.grpc.Status st = StatusMapping.toStatus(t).getStatus();
              r.setCode(st.getCode().value()).setMessage(String.valueOf(st.getDescription()));
            }
            b.addResults(r);
          }
          return b.build();
        });
      }
      HostCalls.as("CheckAccess", req.getUser(), false, () -> {
        rpc().checkAccess(req.getPath(), action);
        return null;
      });
      return CheckAccessResponse.getDefaultInstance();
    });
  }

  @Override
  public void getContentSummary(GetContentSummaryRequest req, StreamObserver<ContentSummary> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.userOnly("GetContentSummary", req.getUser(), req.getService());
      org.apache.hadoop.fs.ContentSummary cs = HostCalls.as("GetContentSummary", req.getUser(),
          false, () -> rpc().getContentSummary(req.getPath()));
      return ContentSummary.newBuilder()
          .setLength(cs.getLength())
          .setFileCount(cs.getFileCount())
          .setDirectoryCount(cs.getDirectoryCount())
          .setQuota(cs.getQuota())
          .setSpaceConsumed(cs.getSpaceConsumed())
          .setSpaceQuota(cs.getSpaceQuota())
          .build();
    });
  }

  @Override
  public void getXAttrs(GetXAttrsRequest req, StreamObserver<GetXAttrsResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.checkCaller("GetXAttrs", req.getUser(), req.getService());
      if (req.getNamesCount() > hc.maxXAttrsPerInode) {
        // No inode carries more: dfs.namenode.fs-limits.max-xattrs-per-inode.
        throw new IllegalArgumentException("GetXAttrs: " + req.getNamesCount() + " names, more than"
            + " a file may carry (" + hc.maxXAttrsPerInode + ", "
            + DFSConfigKeys.DFS_NAMENODE_MAX_XATTRS_PER_INODE_KEY + ")");
      }
      if (req.getService()) {
        for (String n : req.getNamesList()) {
          HostCalls.serviceXAttr("GetXAttrs", n, servicePrefixes);
        }
      }
      List<XAttr> want = req.getNamesCount() == 0 ? null : XAttrHelper.buildXAttrs(req.getNamesList());
      List<XAttr> got = HostCalls.as("GetXAttrs", req.getUser(), req.getService(),
          () -> rpc().getXAttrs(req.getPath(), want));
      GetXAttrsResponse.Builder b = GetXAttrsResponse.newBuilder();
      if (got != null) {
        for (XAttr x : got) {
          String name = XAttrHelper.getPrefixedName(x);
          if (req.getService() && !HostCalls.serviceXAttrAllowed(name, servicePrefixes)) {
            continue; // the service sees only its own xattrs
          }
          byte[] v = x.getValue();
          b.putXattrs(name, v == null ? ByteString.EMPTY : ByteString.copyFrom(v));
        }
      }
      return b.build();
    });
  }

  @Override
  public void setXAttr(SetXAttrRequest req, StreamObserver<SetXAttrResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.checkCaller("SetXAttr", req.getUser(), req.getService());
      if (req.getService()) {
        HostCalls.serviceXAttr("SetXAttr", req.getName(), servicePrefixes);
      }
      XAttr x = XAttrHelper.buildXAttr(req.getName(), req.getValue().toByteArray());
      HostCalls.as("SetXAttr", req.getUser(), req.getService(), () -> {
        rpc().setXAttr(req.getPath(), x, EnumSet.of(XAttrSetFlag.CREATE, XAttrSetFlag.REPLACE));
        return null;
      });
      return SetXAttrResponse.getDefaultInstance();
    });
  }

  @Override
  public void removeXAttr(RemoveXAttrRequest req, StreamObserver<RemoveXAttrResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.checkCaller("RemoveXAttr", req.getUser(), req.getService());
      if (req.getService()) {
        HostCalls.serviceXAttr("RemoveXAttr", req.getName(), servicePrefixes);
      }
      XAttr x = XAttrHelper.buildXAttr(req.getName());
      HostCalls.as("RemoveXAttr", req.getUser(), req.getService(), () -> {
        rpc().removeXAttr(req.getPath(), x);
        return null;
      });
      return RemoveXAttrResponse.getDefaultInstance();
    });
  }

  @Override
  public void reconfigure(ReconfigureRequest req, StreamObserver<ReconfigureResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.serviceOnly("Reconfigure", req.getService());
      if (req.getKey().isEmpty()) {
        throw new IllegalArgumentException("empty key");
      }
      // A co-process may tune what it needs, never e.g. the superuser group or audit loggers.
      if (!reconfigureAllowed.contains(req.getKey())) {
        throw new org.apache.hadoop.security.AccessControlException("reconfiguring "
            + req.getKey() + " is not allowed (" + HookConf.RECONFIGURE_ALLOWED + ")");
      }
      checkReconfigureValue(req.getKey(), req.getValue(), hc);
      String old = daemon.conf(req.getKey());
      daemon.reconfigure(req.getKey(), req.getValue().isEmpty() ? null : req.getValue());
      return ReconfigureResponse.newBuilder().setOldValue(nz(old)).build();
    });
  }

  /**
   * The values Reconfigure may set for an allowed key: empty (the default); the value the
   * daemon was configured with when the hook started; or a decimal integer from 1 (Hadoop's
   * own BlockManager refuses less) up to the key's ceiling, newtricks.host.reconfigure.max.KEY
   * (defaults in HookConf). A key without a ceiling is refused whatever the value.
   */
  static void checkReconfigureValue(String key, String value, HookConf hc) {
    if (value.isEmpty() || value.equals(hc.reconfigureConfigured.get(key))) {
      return;
    }
    Integer max = hc.reconfigureMax.get(key);
    if (max == null) {
      throw new IllegalArgumentException("Reconfigure: no bound for the values of " + key
          + ": set " + HookConf.RECONFIGURE_MAX_PREFIX + key);
    }
    long v = -1;
    if (value.length() <= 10 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
      v = Long.parseLong(value);
    }
    if (v < 1 || v > max) {
      String shown = value.length() > 32 ? value.substring(0, 32) + "..." : value;
      throw new IllegalArgumentException("Reconfigure: " + key + "=" + shown + " is not an integer"
          + " from 1 to " + max + " (" + HookConf.RECONFIGURE_MAX_PREFIX + key + ")");
    }
  }

  @Override
  public void getNamesystemState(GetNamesystemStateRequest req, StreamObserver<NamesystemState> out) {
    HostCalls.serve(metrics, out, () -> {
      FSNamesystem ns = ns();
      Configuration conf = nn.getConf();
      return NamesystemState.newBuilder()
          .setActive(nn.isActiveState())
          .setSafeMode(ns.isInSafeMode())
          .setLiveDatanodes(ns.getNumLiveDataNodes())
          .setNamenodeAddress(nz(nn.getNameNodeAddressHostPortString()))
          .setBlockPoolId(nz(ns.getBlockPoolId()))
          .setPermissionsEnabled(conf.getBoolean(DFSConfigKeys.DFS_PERMISSIONS_ENABLED_KEY,
              DFSConfigKeys.DFS_PERMISSIONS_ENABLED_DEFAULT))
          .setBlockTokenEnabled(conf.getBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY,
              DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_DEFAULT))
          // The NameNode's login user is the HDFS superuser.
          .setSuperuser(UserGroupInformation.getLoginUser().getShortUserName())
          .build();
    });
  }

  // ---- Hotspot (hot-file hints): batched, O(depth) or O(blocks) per file. ----

  /** Upper bound of one batch, so one call never holds the read lock for long. */
  static final int MAX_BATCH = 4096;

  @Override
  public void getQuotaUsage(GetQuotaUsageRequest req, StreamObserver<GetQuotaUsageResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.serviceOnly("GetQuotaUsage", req.getService());
      if (req.getPathsCount() > MAX_BATCH) {
        throw new IllegalArgumentException(req.getPathsCount() + " paths, at most " + MAX_BATCH);
      }
      for (String p : req.getPathsList()) {
        checkPathLength("GetQuotaUsage", p);
      }
      FSNamesystem ns = ns();
      FSDirectory fsd = ns.getFSDirectory();
      Map<String, QuotaDir> dirs = new LinkedHashMap<>();
      GetQuotaUsageResponse.Builder b = GetQuotaUsageResponse.newBuilder();
      // In slices of newtricks.host.lock.max-hold.ms, one path at a time: the quotas of
      // different paths may be read in different slices.
      try (LockSlices lock = readSlices(ns, "newtricksGetQuotaUsage").open()) {
        for (String p : req.getPathsList()) {
          lock.yieldIfDue();
          INode n = fsd.getINode(p);
          if (n == null) {
            b.addMissing(p);
            continue;
          }
          // Walk up to the root: a quota is kept on the directory that has it, with its
          // consumption maintained incrementally by the NameNode, so this is O(depth).
          for (INode cur = n.isDirectory() ? n : n.getParent(); cur != null; cur = cur.getParent()) {
            INodeDirectory d = cur.asDirectory();
            DirectoryWithQuotaFeature q = d.getDirectoryWithQuotaFeature();
            if (q == null) {
              continue;
            }
            String dp = d.getFullPathName();
            if (dirs.containsKey(dp)) {
              continue;
            }
            QuotaCounts quota = d.getQuotaCounts();
            QuotaCounts used = q.getSpaceConsumed();
            dirs.put(dp, QuotaDir.newBuilder().setPath(dp)
                .setSpaceQuota(quota.getStorageSpace())
                .setSpaceConsumed(used.getStorageSpace())
                .setNsQuota(quota.getNameSpace())
                .setNsConsumed(used.getNameSpace())
                .build());
          }
        }
      }
      b.addAllDirs(dirs.values());
      return b.build();
    });
  }

  @Override
  public void inspectFiles(InspectFilesRequest req, StreamObserver<InspectFilesResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.serviceOnly("InspectFiles", req.getService());
      if (!req.getXattr().isEmpty()) {
        HostCalls.serviceXAttr("InspectFiles", req.getXattr(), servicePrefixes);
      }
      if (req.getFileIdsCount() > MAX_BATCH) {
        throw new IllegalArgumentException(req.getFileIdsCount() + " files, at most " + MAX_BATCH);
      }
      if (req.getWantCount() > 0 && req.getWantCount() != req.getFileIdsCount()) {
        throw new IllegalArgumentException("want has " + req.getWantCount() + " entries for "
            + req.getFileIdsCount() + " files");
      }
      if (req.getFromBlockCount() > 0 && req.getFromBlockCount() != req.getFileIdsCount()) {
        throw new IllegalArgumentException("from_block has " + req.getFromBlockCount()
            + " entries for " + req.getFileIdsCount() + " files");
      }
      FSNamesystem ns = ns();
      List<FileInspection.Builder> found;
      try (LockSlices lock = readSlices(ns, "newtricksInspectFiles").open()) {
        found = inspect(req, new NamesystemInodes(ns), lock);
      }
      InspectFilesResponse.Builder b = InspectFilesResponse.newBuilder()
          .setLiveDatanodes(ns.getNumLiveDataNodes());
      List<XAttr> want = req.getXattr().isEmpty() ? null
          : Collections.singletonList(XAttrHelper.buildXAttr(req.getXattr()));
      for (FileInspection.Builder f : found) {
        if (want != null && f.getExists()) {
          try {
            List<XAttr> got = rpc().getXAttrs(INODE_PREFIX + f.getFileId(), want);
            if (got != null && !got.isEmpty() && got.get(0).getValue() != null) {
              f.setHasXattr(true).setXattr(ByteString.copyFrom(got.get(0).getValue()));
            }
          } catch (java.io.IOException e) {
            // Absent xattr or a file deleted meanwhile: reported as no xattr.
          }
        }
        b.addFiles(f);
      }
      return b.build();
    });
  }

  /** The namesystem's read lock, in slices of newtricks.host.lock.max-hold.ms. */
  private LockSlices readSlices(FSNamesystem ns, String opName) {
    return new LockSlices(new LockSlices.Lock() {
      @Override
      public void lock() {
        ns.readLock();
      }

      @Override
      public void unlock() {
        ns.readUnlock(opName);
      }
    }, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(hc.lockMaxHoldMs), System::nanoTime);
  }

  /** What InspectFiles reads under the read lock: the inode map and the block manager. */
  interface Inodes<F> {
    /** The file with this inode id; null if deleted, not a file, or only in a snapshot. */
    F file(long id);

    int blocks(F f);

    int liveReplicas(F f, int block);

    /** Adds the DataNodes holding a live replica of the block. */
    void holders(F f, int block, java.util.Set<String> into);

    /** Path, factor, length, block count and block size. */
    void describe(F f, FileInspection.Builder b);
  }

  private static final class NamesystemInodes implements Inodes<INodeFile> {
    private final FSDirectory fsd;
    private final BlockManager bm;

    NamesystemInodes(FSNamesystem ns) {
      this.fsd = ns.getFSDirectory();
      this.bm = ns.getBlockManager();
    }

    @Override
    public INodeFile file(long id) {
      INode n = fsd.getInode(id);
      if (n == null || !n.isFile() || n.getParent() == null) {
        return null; // deleted (or only in a snapshot): nothing to restore
      }
      return n.asFile();
    }

    @Override
    public int blocks(INodeFile f) {
      return f.getBlocks().length;
    }

    @Override
    public int liveReplicas(INodeFile f, int block) {
      return bm.countNodes(f.getBlocks()[block]).liveReplicas();
    }

    @Override
    public void holders(INodeFile f, int block, java.util.Set<String> into) {
      for (org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo s
          : bm.getStorages(f.getBlocks()[block])) {
        DatanodeDescriptor d = s.getDatanodeDescriptor();
        if (d != null && d.isAlive()) {
          into.add(d.getDatanodeUuid());
        }
      }
    }

    @Override
    public void describe(INodeFile f, FileInspection.Builder b) {
      b.setPath(f.getFullPathName())
          .setReplication(f.getFileReplication())
          .setLength(f.computeFileSize())
          .setBlocks(f.getBlocks().length)
          .setBlockSize(f.getPreferredBlockSize());
    }
  }

  /**
   * InspectFiles' scan, under {@code lock} (open), one block at a time: between blocks and
   * between files the lock may be released for a waiting writer ({@link LockSlices}). After a
   * release inside a file, the file is looked up again by its id and the scan goes on with the
   * next block: a file deleted meanwhile answers exists=false, one that lost blocks (truncate)
   * or gained some (append) is described as it is at its last block, and the replica counts
   * are those each block had when it was scanned, as for any poll.
   */
  static <F> List<FileInspection.Builder> inspect(InspectFilesRequest req, Inodes<F> inodes,
      LockSlices lock) {
    List<FileInspection.Builder> found = new ArrayList<>(req.getFileIdsCount());
    for (int i = 0; i < req.getFileIdsCount(); i++) {
      if (i > 0) {
        lock.yieldIfDue();
      }
      long id = req.getFileIds(i);
      FileInspection.Builder f = FileInspection.newBuilder().setFileId(id);
      found.add(f);
      int want = req.getWantCount() > 0 ? req.getWant(i) : 0;
      int from = req.getFromBlockCount() > 0 ? req.getFromBlock(i) : 0;
      int fewest = -1;
      int firstShort = -1;
      int shortBlocks = 0;
      java.util.Set<String> holders = req.getHolders() ? new java.util.TreeSet<>() : null;
      int j = -1; // next block to scan; -1: not started
      F file;
      scan:
      while (true) {
        file = inodes.file(id);
        if (file == null) {
          break;
        }
        int n = inodes.blocks(file);
        if (j < 0) {
          j = Math.max(0, Math.min(from, n));
        }
        for (; j < n; j++) {
          int live = inodes.liveReplicas(file, j);
          fewest = fewest < 0 ? live : Math.min(fewest, live);
          if (want > 0 && live < want) {
            shortBlocks++;
            if (firstShort < 0) {
              firstShort = j;
            }
          }
          if (holders != null) {
            inodes.holders(file, j, holders);
          }
          if (j + 1 < n && lock.yieldIfDue()) {
            j++;
            continue scan; // the file may have changed while the lock was free
          }
        }
        break;
      }
      if (file == null) {
        continue; // exists=false
      }
      f.setExists(true);
      inodes.describe(file, f);
      f.setMinLiveReplicas(fewest)
          .setFirstShortBlock(firstShort < 0 ? f.getBlocks() : firstShort)
          .setShortBlocks(shortBlocks);
      if (holders != null) {
        f.addAllHolders(holders);
      }
    }
    return found;
  }

  static final String INODE_PREFIX = "/.reserved/.inodes/";

  /** ListStatus's lambda form of {@link HostCalls#userOnly}: checks, then says "not service". */
  private static boolean userOnly(String call, String user, boolean service) {
    HostCalls.userOnly(call, user, service);
    return false;
  }

  /** Applies one change of a SetReplications batch; never throws (tests replace it). */
  interface ChangeApplier {
    ReplicationResult apply(ReplicationChange c, String user, boolean service);
  }

  ChangeApplier applier = this::applyChange;

  @Override
  public void setReplications(SetReplicationsRequest req, StreamObserver<SetReplicationsResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.checkCaller("SetReplications", req.getUser(), req.getService());
      if (req.getChangesCount() > MAX_BATCH) {
        throw new IllegalArgumentException(req.getChangesCount() + " changes, at most " + MAX_BATCH);
      }
      String user = req.getUser();
      boolean service = req.getService();
      List<ReplicationChange> changes = req.getChangesList();
      java.util.Set<String> paths = new java.util.HashSet<>();
      boolean distinct = true;
      for (ReplicationChange c : changes) {
        distinct &= paths.add(c.getPath());
      }
      ChangeApplier apply = applier;
      SetReplicationsResponse.Builder b = SetReplicationsResponse.newBuilder();
      long timeoutMs = hc.setReplicationsTimeoutMs;
      if (!distinct || changes.size() < 2) {
        // In order, on this thread; a change not started within the timeout is not applied,
        // nor is any after it (a later change of the same path must not overtake it).
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (ReplicationChange c : changes) {
          if (System.nanoTime() - deadline >= 0) {
            b.addResults(notStarted(timeoutMs));
          } else {
            b.addResults(apply.apply(c, user, service));
          }
        }
        return b.build();
      }
      // Changes of distinct files run on a few threads: each is up to three edit-log
      // transactions, and concurrent ones share the NameNode's group commit (logSync) instead
      // of waiting for one sync each. Admitted whole or refused (RESOURCE_EXHAUSTED); this
      // thread waits at most newtricks.host.setreplications.timeout.ms.
      List<java.util.concurrent.Callable<ReplicationResult>> items = new ArrayList<>(changes.size());
      for (ReplicationChange c : changes) {
        items.add(() -> apply.apply(c, user, service));
      }
      b.addAllResults(changePool.runAll(items, new BatchPool.Late<ReplicationResult>() {
        @Override
        public ReplicationResult running(long waitedMs) {
          return ReplicationResult.newBuilder().setCode(Status.Code.DEADLINE_EXCEEDED.value())
              .setMessage("still running after " + waitedMs + " ms ("
                  + HookConf.SET_REPLICATIONS_TIMEOUT_MS + "): its outcome is unknown, look again")
              .build();
        }

        @Override
        public ReplicationResult notStarted(long waitedMs) {
          return NameNodeHostService.notStarted(waitedMs);
        }

        @Override
        public ReplicationResult failed(Throwable t) {
          Status st = StatusMapping.toStatus(t).getStatus();
          return ReplicationResult.newBuilder().setCode(st.getCode().value())
              .setMessage(String.valueOf(st.getDescription())).build();
        }
      }));
      return b.build();
    });
  }

  private static ReplicationResult notStarted(long waitedMs) {
    return ReplicationResult.newBuilder().setCode(Status.Code.RESOURCE_EXHAUSTED.value())
        .setMessage("not started within " + waitedMs + " ms (" + HookConf.SET_REPLICATIONS_TIMEOUT_MS
            + "): not applied, the NameNode is behind; try again later")
        .build();
  }

  /**
   * One change of a SetReplications batch, as the user or (service) as the NameNode; never
   * throws. A service change must name a marker under the service prefixes and finds the file
   * carrying it: the service only undoes or adjusts what a hint (run as its user) set up.
   */
  private ReplicationResult applyChange(ReplicationChange c, String user, boolean service) {
    ReplicationResult.Builder r = ReplicationResult.newBuilder();
    try {
      return HostCalls.as("SetReplications", user, service, () -> applyChangeAs(c, service, r));
    } catch (Throwable t) {
      io.grpc.Status s = StatusMapping.toStatus(t).getStatus();
      return r.setCode(s.getCode().value()).setMessage(String.valueOf(s.getDescription())).build();
    }
  }

  private ReplicationResult applyChangeAs(ReplicationChange c, boolean service,
      ReplicationResult.Builder r) throws Exception {
    if (c.getReplication() < 0 || c.getReplication() > Short.MAX_VALUE
        || c.getExpect() < 0 || c.getExpect() > Short.MAX_VALUE) {
      throw new IllegalArgumentException("replication " + c.getReplication() + ", expect " + c.getExpect());
    }
    if (service) {
      String marker = !c.getSetXattr().isEmpty() ? c.getSetXattr() : c.getRemoveXattr();
      if (marker.isEmpty()) {
        throw new AccessControlException("a service change must name its marker xattr"
            + " (set_xattr or remove_xattr)");
      }
      HostCalls.serviceXAttr("SetReplications", marker, servicePrefixes);
      if (!c.getRemoveXattr().isEmpty()) {
        HostCalls.serviceXAttr("SetReplications", c.getRemoveXattr(), servicePrefixes);
      }
      if (!hasXAttr(c.getPath(), marker)) {
        boolean onlyRemoval = c.getReplication() == 0 && c.getSetXattr().isEmpty();
        if (onlyRemoval) {
          return r.setCode(0).build(); // nothing of the service's is left on the file
        }
        throw new AccessControlException("the service changes only files carrying its marker "
            + marker + "; " + c.getPath() + " has none");
      }
    }
    if (conditionalInLock) {
      try {
        return applyInLock(c, r);
      } catch (LinkageError e) {
        conditionalInLock = false;
        LOG.warn("newtricks: conditional replication changes cannot run under one NameNode lock"
            + " on this Hadoop version (" + e + "); falling back to a check and a change as separate operations");
      }
    }
    return applySeparately(c, r);
  }

  /**
   * Whether changes go through {@link NewtricksConditionalChange} (check and change under one
   * hold of the write lock); false once it failed to link against the running Hadoop.
   */
  private static volatile boolean conditionalInLock = true;

  /**
   * The change as one NameNode operation, as the current identity: an outside change can never
   * land between the check and the change.
   */
  private ReplicationResult applyInLock(ReplicationChange c, ReplicationResult.Builder r) throws Exception {
    XAttr inflight = null;
    XAttr settled = null;
    XAttr remove = null;
    if (!c.getSetXattr().isEmpty()) {
      inflight = XAttrHelper.buildXAttr(c.getSetXattr(), c.getXattrValue().toByteArray());
      if (!c.getFinalXattrValue().isEmpty()) {
        settled = XAttrHelper.buildXAttr(c.getSetXattr(), c.getFinalXattrValue().toByteArray());
      }
    }
    if (!c.getRemoveXattr().isEmpty()) {
      remove = XAttrHelper.buildXAttr(c.getRemoveXattr());
    }
    NewtricksConditionalChange.Outcome o = NewtricksConditionalChange.apply(ns(), c.getPath(),
        (short) c.getExpect(), inflight, (short) c.getReplication(), settled, remove);
    r.setBefore(o.before);
    if (o.aborted) {
      return r.setCode(io.grpc.Status.Code.ABORTED.value())
          .setMessage("factor is " + o.before + ", expected " + c.getExpect()).build();
    }
    return r.setChanged(o.changed).setCode(0).build();
  }

  /** The change as separate NameNode operations (Hadoop versions the one-lock path cannot link to). */
  private ReplicationResult applySeparately(ReplicationChange c, ReplicationResult.Builder r) throws Exception {
    HdfsFileStatus st = rpc().getFileInfo(c.getPath());
    if (st == null || st.isDirectory()) {
      throw new FileNotFoundException("File does not exist: " + c.getPath());
    }
    r.setBefore(st.getReplication());
    if (c.getExpect() > 0 && st.getReplication() != c.getExpect()) {
      return r.setCode(io.grpc.Status.Code.ABORTED.value())
          .setMessage("factor is " + st.getReplication() + ", expected " + c.getExpect()).build();
    }
    if (!c.getSetXattr().isEmpty()) {
      XAttr x = XAttrHelper.buildXAttr(c.getSetXattr(), c.getXattrValue().toByteArray());
      rpc().setXAttr(c.getPath(), x, EnumSet.of(XAttrSetFlag.CREATE, XAttrSetFlag.REPLACE));
    }
    if (c.getReplication() > 0 && c.getReplication() != st.getReplication()) {
      r.setChanged(rpc().setReplication(c.getPath(), (short) c.getReplication()));
    }
    if (!c.getSetXattr().isEmpty() && !c.getFinalXattrValue().isEmpty()) {
      XAttr x = XAttrHelper.buildXAttr(c.getSetXattr(), c.getFinalXattrValue().toByteArray());
      rpc().setXAttr(c.getPath(), x, EnumSet.of(XAttrSetFlag.CREATE, XAttrSetFlag.REPLACE));
    }
    if (!c.getRemoveXattr().isEmpty()) {
      try {
        rpc().removeXAttr(c.getPath(), XAttrHelper.buildXAttr(c.getRemoveXattr()));
      } catch (java.io.IOException e) {
        // Already absent: the goal is reached.
      }
    }
    return r.setCode(0).build();
  }

  /** Whether path carries the xattr name (read as the current identity). */
  private boolean hasXAttr(String path, String name) throws java.io.IOException {
    try {
      List<XAttr> got = rpc().getXAttrs(path,
          Collections.singletonList(XAttrHelper.buildXAttr(name)));
      return got != null && !got.isEmpty();
    } catch (java.io.IOException e) {
      if (StatusMapping.codeFor(e).getCode() == io.grpc.Status.Code.NOT_FOUND) {
        throw e; // the file is gone: reported as such
      }
      return false; // "At least one of the attributes provided was not found"
    }
  }

  @Override
  public void setBalancedReads(SetBalancedReadsRequest req, StreamObserver<SetBalancedReadsResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      HostCalls.serviceOnly("SetBalancedReads", req.getService());
      if (req.getPathsCount() > hc.balancedReadsMaxPaths) {
        throw new IllegalArgumentException("SetBalancedReads: " + req.getPathsCount()
            + " paths, at most " + hc.balancedReadsMaxPaths + " ("
            + HookConf.BALANCED_READS_MAX_PATHS + "); the paths in force stay");
      }
      for (String p : req.getPathsList()) {
        if (!p.startsWith("/")) {
          throw new IllegalArgumentException("SetBalancedReads: path " + (p.length() > 64
              ? p.substring(0, 64) + "..." : p) + " is not absolute");
        }
        checkPathLength("SetBalancedReads", p);
      }
      return balancedReads.setHinted(req.getPathsList());
    });
  }

  static FileStatus toProto(String path, HdfsFileStatus st) {
    return FileStatus.newBuilder()
        .setPath(path)
        .setLength(st.getLen())
        .setIsDir(st.isDirectory())
        .setReplication(st.getReplication())
        .setBlockSize(st.getBlockSize())
        .setMtimeMs(st.getModificationTime())
        .setOwner(nz(st.getOwner()))
        .setGroup(nz(st.getGroup()))
        .setPermission(st.getPermission().toShort() & 07777)
        .setFileId(st.getFileId())
        .setChildren(st.isDirectory() ? st.getChildrenNum() : -1)
        .build();
  }

  static LocatedBlock toProto(org.apache.hadoop.hdfs.protocol.LocatedBlock lb, boolean withToken) {
    ExtendedBlock blk = lb.getBlock();
    LocatedBlock.Builder b = LocatedBlock.newBuilder()
        .setBlockPoolId(blk.getBlockPoolId())
        .setBlockId(blk.getBlockId())
        .setGenStamp(blk.getGenerationStamp())
        .setNumBytes(blk.getNumBytes())
        .setOffset(lb.getStartOffset())
        .setCorrupt(lb.isCorrupt());
    for (DatanodeInfo d : lb.getLocations()) {
      b.addLocations(DatanodeRef.newBuilder()
          .setUuid(nz(d.getDatanodeUuid()))
          .setHostname(nz(d.getHostName()))
          .setXferAddr(nz(d.getXferAddr()))
          .setIpcAddr(nz(d.getIpcAddr(false))));
    }
    org.apache.hadoop.security.token.Token<BlockTokenIdentifier> t = lb.getBlockToken();
    if (withToken && t != null && t.getIdentifier() != null && t.getIdentifier().length > 0) {
      b.setToken(Token.newBuilder()
          .setIdentifier(ByteString.copyFrom(t.getIdentifier()))
          .setPassword(ByteString.copyFrom(t.getPassword()))
          .setKind(t.getKind().toString())
          .setService(t.getService().toString()));
    }
    return b.build();
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
