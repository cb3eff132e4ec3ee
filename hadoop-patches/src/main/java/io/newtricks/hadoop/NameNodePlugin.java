package io.newtricks.hadoop;

import io.grpc.BindableService;
import io.newtricks.hadoop.events.EventHub;
import io.newtricks.hadoop.events.EventStream;
import io.newtricks.hadoop.host.DelegationTokens;
import io.newtricks.hadoop.host.NameNodeHostService;
import io.newtricks.hadoop.host.SecurityHostService;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.SetBalancedReadsResponse;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.namenode.NameNode;

/**
 * NameNode ServicePlugin ({@code dfs.namenode.plugins=io.newtricks.hadoop.NameNodePlugin}).
 *
 * <p>{@link #start} returns at once: a background thread starts the host gRPC service
 * (NameNodeHost), the namenode-ext supervisor and the event stream ({@link HookPlugin}).
 * Nothing here may throw into, block, or slow the NameNode.
 */
public class NameNodePlugin extends HookPlugin<NameNode> {
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
    return new HookMetrics(HookMetrics.NAMENODE_SOURCE, EventStream::addMetrics);
  }

  @Override
  void configure(Configuration conf) {
    EventHub.get().configure(conf);
  }

  @Override
  void disabled() {
    EventStream.disable();
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
    return new BindableService[] {
        new NameNodeHostService(nn, m, hc, NameNodePlugin::setBalancedReads),
        new SecurityHostService(conf, m, DelegationTokens.nameNode(nn))};
  }

  /** The event forwarder and the namespace-event tailer it drives. */
  @Override
  Part beside(NameNode nn, CoprocessLink link, HookMetrics m, HookConf hc) {
    EventStream events = EventStream.open(nn, link, m, hc);
    return new Part() {
      @Override
      public void start() {
        events.start();
      }

      @Override
      public void stop() {
        events.stop();
      }
    };
  }

  /** NameNodeHost.SetBalancedReads: the hinted files of {@link BalancedReads}. */
  private static SetBalancedReadsResponse setBalancedReads(List<String> paths) {
    BalancedReads.setHinted(paths);
    return SetBalancedReadsResponse.newBuilder()
        .setTopologyInstalled(BalancedReads.topologyInstalled())
        .setAuditHookInstalled(BalancedReads.auditHookInstalled())
        .setScope(BalancedReads.scope())
        .build();
  }
}
