package io.newtricks.hadoop;

import io.grpc.BindableService;
import io.newtricks.hadoop.host.HostServer;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.CoprocessSupervisor;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.hadoop.supervise.Prewarm;
import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.ServicePlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle {@link NameNodePlugin} and {@link DataNodePlugin} share.
 *
 * <p>{@link #start} returns at once: a background thread reads the hook's configuration,
 * registers its metrics, waits until the daemon can be served, starts the host gRPC service and
 * the co-process supervisor, and then whatever the daemon's plugin runs beside them
 * ({@link #beside}). {@link #stop} (also one that comes while the start is still under way)
 * stops them in reverse order; the supervisor stops the co-process with its grace period and
 * removes its JVM shutdown hook. Nothing here may throw into, block, or slow the daemon: every
 * failure is logged and the daemon carries on without its extension.
 *
 * @param <D> the daemon (NameNode or DataNode) the plugin is loaded into
 */
abstract class HookPlugin<D> implements ServicePlugin {
  /** What a plugin runs beside the supervisor: started after it, stopped before it. */
  interface Part {
    void start();

    void stop();
  }

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final Class<D> daemonType;
  /** "namenode" | "datanode": the co-process's kind, and thread names. */
  private final String kind;
  /** "NameNode" | "DataNode", for log lines. */
  private final String daemonName;
  private final String binaryKey;

  private final Object lock = new Object();
  private boolean stopped;
  private Thread starter;
  private HookMetrics metrics;
  private HostServer host;
  private CoprocessSupervisor supervisor;
  private Part part;

  HookPlugin(Class<D> daemonType, String kind) {
    this.daemonType = daemonType;
    this.kind = kind;
    this.daemonName = daemonType.getSimpleName();
    this.binaryKey = HookConf.binaryKey(kind);
  }

  /** The daemon's configuration. */
  abstract Configuration conf(D daemon);

  /** The hook's metrics source, not registered yet. */
  abstract HookMetrics newMetrics();

  /** Before the metrics are registered, whether or not the co-process is configured. */
  void configure(Configuration conf) {}

  /** The co-process binary is not configured: the extension stays off. */
  void disabled() {}

  /**
   * Waits until the daemon can be served (a DataNode: registered); false if the plugin was
   * stopped meanwhile.
   */
  boolean awaitReady(D daemon) throws InterruptedException {
    return true;
  }

  /** The host service's socket file name, unique per daemon on the host. */
  abstract String socketName(D daemon);

  /** The daemon_id the co-process is configured with. */
  abstract String daemonId(D daemon);

  /** The host gRPC services the co-process calls back. */
  abstract BindableService[] services(D daemon, Configuration conf, HookMetrics m, HookConf hc);

  /** What runs beside the supervisor (the NameNode's event stream); null: nothing. */
  Part beside(D daemon, CoprocessLink link, HookMetrics m, HookConf hc) {
    return null;
  }

  /** "&lt;prefix&gt;-&lt;pid&gt;-&lt;port&gt;.sock", the port of addr (0 if null). */
  static String socketName(String prefix, InetSocketAddress addr) {
    int port = addr == null ? 0 : addr.getPort();
    return prefix + "-" + ProcessHandle.current().pid() + "-" + port + ".sock";
  }

  final boolean isStopped() {
    synchronized (lock) {
      return stopped;
    }
  }

  @Override
  public void start(Object service) {
    try {
      if (!daemonType.isInstance(service)) {
        log.warn("newtricks: {} loaded into {}, not a {}; disabled", getClass().getSimpleName(),
            service == null ? "null" : service.getClass().getName(), daemonName);
        return;
      }
      D daemon = daemonType.cast(service);
      // Loads the gRPC code meanwhile (a no-op if the audit logger or the event journal
      // started it already).
      Prewarm.start(conf(daemon), binaryKey);
      Thread t = new Thread(() -> startAsync(daemon), "newtricks-" + kind + "-plugin-start");
      t.setDaemon(true);
      synchronized (lock) {
        starter = t;
      }
      t.start();
    } catch (Throwable t) {
      log.warn("newtricks: {} failed to start; the {} is unaffected", getClass().getSimpleName(),
          daemonName, t);
    }
  }

  private void startAsync(D daemon) {
    try {
      Configuration conf = conf(daemon);
      HookConf hc = new HookConf(conf, binaryKey);
      configure(conf);
      HookMetrics m = newMetrics().register();
      synchronized (lock) {
        if (stopped) {
          m.unregister();
          return;
        }
        metrics = m;
      }
      if (hc.binary.isEmpty()) {
        disabled();
        log.warn("newtricks: {} is not set; the {} extension is disabled", binaryKey, daemonName);
        return;
      }
      if (!awaitReady(daemon)) {
        return;
      }
      String sockName = socketName(daemon);
      // Let the warm-up finish first: two threads initializing the same gRPC/Netty classes
      // at once only wait for each other, and would risk a class-initialization cycle.
      Prewarm.await(Prewarm.MAX_WAIT_MS);
      HostServer h = HostServer.start(hc, sockName, services(daemon, conf, m, hc));
      CoprocessSupervisor s = new CoprocessSupervisor(kind, daemonId(daemon), h.address(),
          HookConf.forwarded(conf), hc, m);
      Part p = beside(daemon, s, m, hc);
      synchronized (lock) {
        if (stopped) {
          h.stop();
          return;
        }
        host = h;
        supervisor = s;
        part = p;
        s.start();
        if (p != null) {
          p.start();
        }
      }
    } catch (InterruptedException e) {
      // stopped while waiting
    } catch (Throwable t) {
      log.warn("newtricks: {} hook did not start; the {} is unaffected: {}", daemonName,
          daemonName, t.toString(), t);
    }
  }

  @Override
  public void stop() {
    Part p;
    CoprocessSupervisor s;
    HostServer h;
    HookMetrics m;
    Thread t;
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
      p = part;
      s = supervisor;
      h = host;
      m = metrics;
      t = starter;
    }
    try {
      if (t != null) {
        t.interrupt();
      }
      if (p != null) {
        p.stop();
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
      log.warn("newtricks: error stopping the {} hook", daemonName, e);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
