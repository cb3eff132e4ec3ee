package io.newtricks.hadoop.host;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.newtricks.hadoop.supervise.CoprocessSupervisor;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.UnixSockets;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hook's own gRPC server on a unix socket in the socket dir, which the co-process calls back
 * (its address goes out in Configure.host_address). The socket file is removed on stop.
 */
public final class HostServer {
  private static final Logger LOG = LoggerFactory.getLogger(HostServer.class);
  /** sun_path holds 108 bytes including the terminating NUL. */
  static final int MAX_SOCKET_PATH = 107;
  /** go-plugin names its socket "plugin" + up to 10 digits in the same directory. */
  private static final int GO_PLUGIN_NAME = 16;

  private final File socket;
  private final Server server;
  private final ExecutorService executor;
  private final BoundedCalls bounded;

  private HostServer(File socket, Server server, ExecutorService executor, BoundedCalls bounded) {
    this.socket = socket;
    this.server = server;
    this.executor = executor;
    this.bounded = bounded;
  }

  /**
   * Starts serving {@code services} on {@code hc.socketDir/fileName} with {@code hc.hostHandlers}
   * threads; at most {@code hc.hostQueue} further calls wait, more are refused with
   * RESOURCE_EXHAUSTED (see {@link BoundedCalls}).
   *
   * @param fileName unique per daemon, e.g. nn-&lt;pid&gt;-&lt;rpcport&gt;.sock
   */
  public static HostServer start(HookConf hc, String fileName, BindableService... services)
      throws IOException {
    File socketDir = hc.socketDir;
    int handlers = hc.hostHandlers;
    File socket = new File(socketDir, fileName);
    int longest = socketDir.getAbsolutePath().length() + 1 + Math.max(fileName.length(), GO_PLUGIN_NAME);
    if (longest > MAX_SOCKET_PATH) {
      throw new IOException("unix socket paths under " + socketDir + " would be " + longest
          + " bytes, over the " + MAX_SOCKET_PATH + "-byte limit: set " + HookConf.SOCKET_DIR
          + " to a shorter directory");
    }
    CoprocessSupervisor.ensureDir(socketDir);
    Files.deleteIfExists(socket.toPath()); // stale file from a crashed daemon with our pid
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor executor = new ThreadPoolExecutor(handlers, handlers, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "newtricks-host-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    executor.allowCoreThreadTimeOut(true);
    BoundedCalls bounded = new BoundedCalls(executor, handlers + Math.max(0, hc.hostQueue));
    // Callbacks run on the event loop only as far as the admission check; BoundedCalls hands
    // every admitted call to the executor.
    // Every string and list of a request is bounded by the message it came in (gRPC's own
    // default, made explicit so it never depends on the library's).
    NettyServerBuilder b = UnixSockets.server(socket.getPath()).directExecutor()
        .maxInboundMessageSize(hc.hostMaxMessageBytes);
    for (BindableService service : services) {
      b.addService(ServerInterceptors.intercept(service, bounded));
    }
    Server server = b.build().start();
    socket.deleteOnExit(); // daemons stopped by SIGTERM never call ServicePlugin.stop()
    socket.setReadable(true, true);
    socket.setWritable(true, true);
    for (BindableService service : services) {
      LOG.info("newtricks: host service {} listening on {}", service.bindService()
          .getServiceDescriptor().getName(), socket);
    }
    return new HostServer(socket, server, executor, bounded);
  }

  /** The address to hand to the co-process. */
  public String address() {
    return "unix://" + socket.getAbsolutePath();
  }

  /** Calls admitted right now (running or waiting for a handler). */
  int admitted() {
    return bounded.admitted();
  }

  public void stop() {
    server.shutdown();
    try {
      if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
    try {
      Files.deleteIfExists(socket.toPath());
    } catch (IOException e) {
      LOG.debug("newtricks: remove {}", socket, e);
    }
  }
}
