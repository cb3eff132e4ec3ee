package io.newtricks.hadoop;

import org.apache.hadoop.hdfs.DFSConfigKeys;

import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.util.ServicePlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NameNode ServicePlugin ({@code dfs.namenode.plugins=io.newtricks.hadoop.NameNodePlugin}).
 *
 * <p>{@link #start} returns at once: a background thread starts the host gRPC service
 * (NameNodeHost), the namenode-ext supervisor and the event forwarder. Nothing here may throw
 * into, block, or slow the NameNode.
 */
public class NameNodePlugin implements ServicePlugin {
  private static final Logger LOG = LoggerFactory.getLogger(NameNodePlugin.class);
  static final String KIND = "namenode";

  private final Object lock = new Object();
  private boolean stopped;
  private Thread starter;
  private HookMetrics metrics;
  private HostServer host;
  private CoprocessSupervisor supervisor;
  private EventForwarder forwarder;

  @Override
  public void start(Object service) {
    try {
      if (!(service instanceof NameNode)) {
        LOG.warn("newtricks: NameNodePlugin loaded into {}, not a NameNode; disabled",
            service == null ? "null" : service.getClass().getName());
        return;
      }
      NameNode nn = (NameNode) service;
      // A no-op if the audit logger or the event journal started it already.
      Prewarm.start(nn.getConf(), HookConf.NAMENODE_BINARY);
      Thread t = new Thread(() -> startAsync(nn), "newtricks-namenode-plugin-start");
      t.setDaemon(true);
      synchronized (lock) {
        starter = t;
      }
      t.start();
    } catch (Throwable t) {
      LOG.warn("newtricks: NameNodePlugin failed to start; the NameNode is unaffected", t);
    }
  }

  private void startAsync(NameNode nn) {
    try {
      Configuration conf = nn.getConf();
      HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
      EventHub hub = EventHub.get();
      HookConf.configureHub(hub, conf);
      HookMetrics m = new HookMetrics(HookMetrics.NAMENODE_SOURCE).register();
      synchronized (lock) {
        if (stopped) {
          m.unregister();
          return;
        }
        metrics = m;
      }
      if (hc.binary.isEmpty()) {
        hub.close();
        EditCapture.get().select(EditCapture.Selection.NONE);
        LOG.warn("newtricks: {} is not set; the NameNode extension is disabled",
            HookConf.NAMENODE_BINARY);
        return;
      }
      hub.open();
      InetSocketAddress rpcAddr = nn.getNameNodeAddress();
      int port = rpcAddr == null ? 0 : rpcAddr.getPort();
      String sockName = "nn-" + ProcessHandle.current().pid() + "-" + port + ".sock";
      // Let the warm-up finish first: two threads initializing the same gRPC/Netty classes
      // at once only wait for each other, and would risk a class-initialization cycle.
      Prewarm.await(Prewarm.MAX_WAIT_MS);
      HostServer h = HostServer.start(hc, sockName, new NameNodeHostService(nn, m, hc),
          new SecurityHostService(conf, m, DelegationTokens.nameNode(nn)));
      String daemonId = nn.getNameNodeAddressHostPortString();
      CoprocessSupervisor s = new CoprocessSupervisor(KIND, daemonId == null ? "" : daemonId,
          h.address(), HookConf.forwarded(conf), hc, m);
      NamespaceTailer tailer;
      if (EditCapture.get().installed()) {
        // The NameNode writes its edits through our journal: events stream as they are synced.
        tailer = new JournalTailer(EditCapture.get(), JournalTailer.of(nn), hc.inotifyPollMs,
            hc.rollMinIntervalMs, hc.inotifyMaxPending, m);
        LOG.info("newtricks: namespace events from the event journal");
      } else {
        // getEditsFromTxid reads this key from the NameNode's conf on every call.
        String perRpc = DFSConfigKeys.DFS_NAMENODE_INOTIFY_MAX_EVENTS_PER_RPC_KEY;
        if (nn.getConf().getInt(perRpc, DFSConfigKeys.DFS_NAMENODE_INOTIFY_MAX_EVENTS_PER_RPC_DEFAULT)
            < hc.inotifyEventsPerRead) {
          nn.getConf().setInt(perRpc, hc.inotifyEventsPerRead);
        }
        tailer = new InotifyTailer(InotifyTailer.of(nn.getRpcServer()),
            hc.inotifyPollMs, hc.inotifyMaxPending, hc.inotifyCostFactor, m);
        LOG.info("newtricks: namespace events polled from the edit log (inotify); add the event "
            + "journal to dfs.namenode.edits.dir to stream them (BUILDING.md)");
      }
      EventForwarder f = new EventForwarder(hub, tailer, s, m, hc);
      try {
        f.resume(EventState.load(hc.stateFile));
      } catch (Throwable t) {
        LOG.warn("newtricks: ignoring unreadable event state {}: {}", hc.stateFile, t.toString());
      }
      synchronized (lock) {
        if (stopped) {
          h.stop();
          return;
        }
        host = h;
        supervisor = s;
        forwarder = f;
        s.start();
        f.start();
      }
    } catch (Throwable t) {
      LOG.warn("newtricks: NameNode hook did not start; the NameNode is unaffected: {}",
          t.toString(), t);
    }
  }

  @Override
  public void stop() {
    EventForwarder f;
    CoprocessSupervisor s;
    HostServer h;
    HookMetrics m;
    Thread t;
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
      f = forwarder;
      s = supervisor;
      h = host;
      m = metrics;
      t = starter;
    }
    try {
      if (t != null) {
        t.interrupt();
      }
      if (f != null) {
        f.stop();
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
      LOG.warn("newtricks: error stopping the NameNode hook", e);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
