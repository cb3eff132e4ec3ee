package io.newtricks.hadoop;

import io.grpc.BindableService;
import io.newtricks.hadoop.host.DataNodeHostService;
import io.newtricks.hadoop.host.DelegationTokens;
import io.newtricks.hadoop.host.SecurityHostService;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * DataNode ServicePlugin ({@code dfs.datanode.plugins=io.newtricks.hadoop.DataNodePlugin}).
 *
 * <p>{@link #start} returns at once. A background thread waits until the DataNode has its
 * FSDataset and has registered (its UUID is known), then starts the DataNodeHost gRPC service and
 * the datanode-ext supervisor (daemon_id = DataNode UUID); see {@link HookPlugin}.
 */
public class DataNodePlugin extends HookPlugin<DataNode> {
  static final String KIND = "datanode";
  private static final long READY_POLL_MS = 100;

  public DataNodePlugin() {
    super(DataNode.class, KIND);
  }

  @Override
  Configuration conf(DataNode dn) {
    return dn.getConf();
  }

  @Override
  HookMetrics newMetrics() {
    return new HookMetrics(HookMetrics.DATANODE_SOURCE);
  }

  @Override
  boolean awaitReady(DataNode dn) throws InterruptedException {
    while (dn.getFSDataset() == null || dn.getDatanodeUuid() == null) {
      if (isStopped()) {
        return false;
      }
      Thread.sleep(READY_POLL_MS);
    }
    return true;
  }

  @Override
  String socketName(DataNode dn) {
    return socketName("dn", dn.getXferAddress());
  }

  @Override
  String daemonId(DataNode dn) {
    return dn.getDatanodeUuid();
  }

  @Override
  BindableService[] services(DataNode dn, Configuration conf, HookMetrics m, HookConf hc) {
    return new BindableService[] {new DataNodeHostService(dn, m),
        new SecurityHostService(conf, m, DelegationTokens.dataNode(conf))};
  }
}
