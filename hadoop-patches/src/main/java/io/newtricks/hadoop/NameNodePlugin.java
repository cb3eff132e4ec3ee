package io.newtricks.hadoop;

import io.grpc.BindableService;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NameNode ServicePlugin ({@code dfs.namenode.plugins=io.newtricks.hadoop.NameNodePlugin}).
 *
 * <p>{@link #start} returns at once: a background thread starts the host gRPC service
 * (NameNodeHost), the namenode-ext supervisor and the event forwarder ({@link HookPlugin}).
 * Nothing here may throw into, block, or slow the NameNode.
 */
public class NameNodePlugin extends HookPlugin<NameNode> {
  private static final Logger LOG = LoggerFactory.getLogger(NameNodePlugin.class);
  static final String KIND = "namenode";

  public NameNodePlugin() {
    super(NameNode.class, KIND);
  }

  @Override
  Configuration conf(NameNode nn) {
    return nn.getConf();
  }

  @Override
  HookMetrics newMetrics() {
    return new HookMetrics(HookMetrics.NAMENODE_SOURCE);
  }

  @Override
  void configure(Configuration conf) {
    HookConf.configureHub(EventHub.get(), conf);
  }

  @Override
  void disabled() {
    EventHub.get().close();
    EditCapture.get().select(EditCapture.Selection.NONE);
  }

  @Override
  String socketName(NameNode nn) {
    return socketName("nn", nn.getNameNodeAddress());
  }

  @Override
  String daemonId(NameNode nn) {
    String id = nn.getNameNodeAddressHostPortString();
    return id == null ? "" : id;
  }

  @Override
  BindableService[] services(NameNode nn, Configuration conf, HookMetrics m, HookConf hc) {
    return new BindableService[] {new NameNodeHostService(nn, m, hc),
        new SecurityHostService(conf, m, DelegationTokens.nameNode(nn))};
  }

  /** The event forwarder and the namespace-event tailer it drives. */
  @Override
  Part beside(NameNode nn, CoprocessLink link, HookMetrics m, HookConf hc) {
    EventHub.get().open();
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
    EventForwarder f = new EventForwarder(EventHub.get(), tailer, link, m, hc);
    try {
      f.resume(EventState.load(hc.stateFile));
    } catch (Throwable t) {
      LOG.warn("newtricks: ignoring unreadable event state {}: {}", hc.stateFile, t.toString());
    }
    return new Part() {
      @Override
      public void start() {
        f.start();
      }

      @Override
      public void stop() {
        f.stop();
      }
    };
  }
}
