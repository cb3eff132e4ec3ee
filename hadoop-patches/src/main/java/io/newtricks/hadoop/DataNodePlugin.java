package io.newtricks.hadoop;

import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.util.ServicePlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DataNode ServicePlugin ({@code dfs.datanode.plugins=io.newtricks.hadoop.DataNodePlugin}).
 *
 * <p>{@link #start} returns at once. A background thread waits until the DataNode has its
 * FSDataset and has registered (its UUID is known), then starts the DataNodeHost gRPC service and
 * the datanode-ext supervisor (daemon_id = DataNode UUID).
 */
public class DataNodePlugin implements ServicePlugin {
  private static final Logger LOG = LoggerFactory.getLogger(DataNodePlugin.class);
  static final String KIND = "datanode";
  private static final long READY_POLL_MS = 100;

  private final Object lock = new Object();
  private boolean stopped;
  private Thread starter;
  private HookMetrics metrics;
  private HostServer host;
  private CoprocessSupervisor supervisor;

  @Override
  public void start(Object service) {
    try {
      if (!(service instanceof DataNode)) {
        LOG.warn("newtricks: DataNodePlugin loaded into {}, not a DataNode; disabled",
            service == null ? "null" : service.getClass().getName());
        return;
      }
      DataNode dn = (DataNode) service;
      // Loads the gRPC code while the plugin waits for the DataNode to register.
      Prewarm.start(dn.getConf(), HookConf.DATANODE_BINARY);
      Thread t = new Thread(() -> startAsync(dn), "newtricks-datanode-plugin-start");
      t.setDaemon(true);
      synchronized (lock) {
        starter = t;
      }
      t.start();
    } catch (Throwable t) {
      LOG.warn("newtricks: DataNodePlugin failed to start; the DataNode is unaffected", t);
    }
  }

  private void startAsync(DataNode dn) {
    try {
      Configuration conf = dn.getConf();
      HookConf hc = new HookConf(conf, HookConf.DATANODE_BINARY);
      HookMetrics m = new HookMetrics(HookMetrics.DATANODE_SOURCE).register();
      synchronized (lock) {
        if (stopped) {
          m.unregister();
          return;
        }
        metrics = m;
      }
      if (hc.binary.isEmpty()) {
        LOG.warn("newtricks: {} is not set; the DataNode extension is disabled",
            HookConf.DATANODE_BINARY);
        return;
      }
      while (dn.getFSDataset() == null || dn.getDatanodeUuid() == null) {
        synchronized (lock) {
          if (stopped) {
            return;
          }
        }
        Thread.sleep(READY_POLL_MS);
      }
      InetSocketAddress xfer = dn.getXferAddress();
      int port = xfer == null ? 0 : xfer.getPort();
      String sockName = "dn-" + ProcessHandle.current().pid() + "-" + port + ".sock";
      // Let the warm-up finish first: two threads initializing the same gRPC/Netty classes
      // at once only wait for each other, and would risk a class-initialization cycle.
      Prewarm.await(Prewarm.MAX_WAIT_MS);
      HostServer h = HostServer.start(hc, sockName, new DataNodeHostService(dn, m),
          new SecurityHostService(conf, m, DelegationTokens.dataNode(conf)));
      CoprocessSupervisor s = new CoprocessSupervisor(KIND, dn.getDatanodeUuid(), h.address(),
          HookConf.forwarded(conf), hc, m);
      synchronized (lock) {
        if (stopped) {
          h.stop();
          return;
        }
        host = h;
        supervisor = s;
        s.start();
      }
    } catch (InterruptedException e) {
      // stopped while waiting
    } catch (Throwable t) {
      LOG.warn("newtricks: DataNode hook did not start; the DataNode is unaffected: {}",
          t.toString(), t);
    }
  }

  @Override
  public void stop() {
    CoprocessSupervisor s;
    HostServer h;
    HookMetrics m;
    Thread t;
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
      s = supervisor;
      h = host;
      m = metrics;
      t = starter;
    }
    try {
      if (t != null) {
        t.interrupt();
      }
      if (s != null) {
        s.stop();
      }
      if (h != null) {
        h.stop();
      }
      if (m != null) {
        m.unregister();
      }
    } catch (Throwable e) {
      LOG.warn("newtricks: error stopping the DataNode hook", e);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
