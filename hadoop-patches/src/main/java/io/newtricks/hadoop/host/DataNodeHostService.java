package io.newtricks.hadoop.host;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.DataNodeHostGrpc;
import io.newtricks.proto.v1.DatanodeIdentity;
import io.newtricks.proto.v1.IdentityRequest;
import io.newtricks.proto.v1.Replica;
import io.newtricks.proto.v1.ReportBadBlockRequest;
import io.newtricks.proto.v1.ReportBadBlockResponse;
import io.newtricks.proto.v1.ResolveReplicaRequest;
import java.io.FileNotFoundException;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.Block;
import org.apache.hadoop.hdfs.protocol.BlockLocalPathInfo;
import org.apache.hadoop.hdfs.protocol.DatanodeID;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockPoolTokenSecretManager;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsDatasetSpi;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsVolumeSpi;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.token.Token;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DataNodeHost (host.proto): identity of this DataNode, and block -> local replica path for a
 * caller that holds a valid block access token for READ issued to that same user. Without block
 * tokens there is no way to know what a user may read, so ResolveReplica refuses every call.
 * ReportBadBlock hands a replica the co-process found not to match its checksums to the
 * DataNode's own bad-block report.
 */
public final class DataNodeHostService extends DataNodeHostGrpc.DataNodeHostImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(DataNodeHostService.class);
  private final DataNode dn;
  private final HookMetrics metrics;
  private final boolean blockTokens;

  public DataNodeHostService(DataNode dn, HookMetrics metrics) {
    this.dn = dn;
    this.metrics = metrics;
    this.blockTokens = dn.getConf().getBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY,
        DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_DEFAULT);
  }

  @Override
  public void identity(IdentityRequest req, StreamObserver<DatanodeIdentity> out) {
    HostCalls.serve(metrics, out, () -> {
      FsDatasetSpi<?> ds = dn.getFSDataset();
      String uuid = dn.getDatanodeUuid();
      DatanodeIdentity.Builder b = DatanodeIdentity.newBuilder()
          .setUuid(uuid == null ? "" : uuid)
          .setIpcPort(dn.getIpcPort())
          .setInfoPort(dn.getInfoPort())
          .setBlockTokenEnabled(blockTokens)
          .setReady(ds != null && uuid != null);
      DatanodeID id = dn.getDatanodeId();
      if (id != null) {
        b.setHostname(nz(id.getHostName())).setXferAddr(nz(id.getXferAddr()));
      } else if (dn.getXferAddress() != null) {
        b.setXferAddr(dn.getXferAddress().getAddress().getHostAddress() + ":"
            + dn.getXferAddress().getPort());
      }
      if (ds != null) {
        b.addAllBlockPoolIds(blockPools(ds));
      }
      return b.build();
    });
  }

  @Override
  public void resolveReplica(ResolveReplicaRequest req, StreamObserver<Replica> out) {
    HostCalls.serve(metrics, out, () -> {
      if (!blockTokens) {
        throw Status.FAILED_PRECONDITION
            .withDescription("dfs.block.access.token.enable is false: replica access cannot be checked")
            .asRuntimeException();
      }
      FsDatasetSpi<?> ds = dn.getFSDataset();
      BlockPoolTokenSecretManager sm = dn.getBlockPoolTokenSecretManager();
      if (ds == null || sm == null) {
        throw Status.UNAVAILABLE.withDescription("DataNode not ready").asRuntimeException();
      }
      if (req.getUser().isEmpty() || !req.hasToken() || req.getToken().getIdentifier().isEmpty()) {
        throw new AccessControlException("a user and a block access token are required");
      }
      ExtendedBlock block =
          new ExtendedBlock(req.getBlockPoolId(), req.getBlockId(), 0, req.getGenStamp());
      Token<BlockTokenIdentifier> token = new Token<>(
          req.getToken().getIdentifier().toByteArray(),
          req.getToken().getPassword().toByteArray(),
          new Text(req.getToken().getKind()),
          new Text(req.getToken().getService()));
      // Verifies the password (HMAC with the block pool's key), expiry, block pool and id, READ
      // mode, and that the token was issued to this user; throws InvalidToken otherwise.
      try {
        sm.checkAccess(token, req.getUser(), block, BlockTokenIdentifier.AccessMode.READ);
      } catch (Exception e) {
        throw new AccessControlException("block token rejected: " + e.getMessage());
      }
      Block stored = ds.getStoredBlock(req.getBlockPoolId(), req.getBlockId());
      if (stored == null) {
        throw new FileNotFoundException("no replica of block " + block + " on this DataNode");
      }
      if (req.getGenStamp() != 0 && stored.getGenerationStamp() < req.getGenStamp()) {
        throw new FileNotFoundException("replica of " + block + " is stale (genstamp "
            + stored.getGenerationStamp() + ")");
      }
      ExtendedBlock current = new ExtendedBlock(req.getBlockPoolId(), stored);
      BlockLocalPathInfo info = ds.getBlockLocalPathInfo(current);
      return Replica.newBuilder()
          .setBlockPath(nz(info.getBlockPath()))
          .setMetaPath(nz(info.getMetaPath()))
          .setNumBytes(ds.getReplicaVisibleLength(current))
          .setGenStamp(stored.getGenerationStamp())
          .setFinalized(ds.isValidBlock(current))
          .build();
    });
  }

  /**
   * Reports this DataNode's replica of a block as corrupt, as the DataNode reports a replica that
   * fails its checksums: DataNode.reportBadBlocks(ExtendedBlock) queues it for every NameNode of
   * the block pool, sent with the next heartbeat; the NameNode marks the replica corrupt,
   * replicates the block from a good replica and deletes this one. Only for a finalized replica
   * of exactly that generation on this DataNode: a replica being written may still change, and
   * a report must never name another replica than the one whose bytes failed.
   */
  @Override
  public void reportBadBlock(ReportBadBlockRequest req, StreamObserver<ReportBadBlockResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getBlockPoolId().isEmpty() || req.getBlockId() == 0) {
        throw new IllegalArgumentException("block pool id and block id are required");
      }
      FsDatasetSpi<?> ds = dn.getFSDataset();
      if (ds == null) {
        throw Status.UNAVAILABLE.withDescription("DataNode not ready").asRuntimeException();
      }
      Block stored = ds.getStoredBlock(req.getBlockPoolId(), req.getBlockId());
      if (stored == null) {
        throw new FileNotFoundException("no replica of block " + req.getBlockId() + " on this DataNode");
      }
      if (req.getGenStamp() != 0 && stored.getGenerationStamp() != req.getGenStamp()) {
        throw new FileNotFoundException("the replica of block " + req.getBlockId() + " is generation "
            + stored.getGenerationStamp() + " now, not " + req.getGenStamp());
      }
      ExtendedBlock current = new ExtendedBlock(req.getBlockPoolId(), stored);
      if (!ds.isValidBlock(current)) {
        throw Status.FAILED_PRECONDITION.withDescription("the replica of " + current
            + " is not finalized").asRuntimeException();
      }
      LOG.warn("newtricks: replica {} does not match its checksums ({}): reporting it to the NameNode",
          current, truncate(req.getReason(), 200));
      dn.reportBadBlocks(current);
      return ReportBadBlockResponse.getDefaultInstance();
    });
  }

  private static String truncate(String s, int n) {
    return s.length() <= n ? s : s.substring(0, n) + "...";
  }

  static Set<String> blockPools(FsDatasetSpi<?> ds) throws java.io.IOException {
    Set<String> pools = new TreeSet<>();
    try (FsDatasetSpi.FsVolumeReferences vols = ds.getFsVolumeReferences()) {
      for (FsVolumeSpi v : vols) {
        for (String bp : v.getBlockPoolList()) {
          pools.add(bp);
        }
      }
    }
    return pools;
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
