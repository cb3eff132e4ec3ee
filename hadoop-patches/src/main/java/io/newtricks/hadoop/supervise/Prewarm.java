package io.newtricks.hadoop.supervise;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.newtricks.goplugin.health.HealthCheckRequest;
import io.newtricks.goplugin.health.HealthCheckResponse;
import io.newtricks.goplugin.health.HealthGrpc;
import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads and links the shaded gRPC/Netty/protobuf code on a background thread as soon as the
 * daemon creates the first hook object, so the hook's own start (host service, co-process
 * handshake, Configure) does not pay for it after the daemon is up. A NameNode creates its
 * audit logger and event journal while it constructs FSNamesystem, before loading its image, so
 * the warm-up runs beside the NameNode's own start; a DataNode starts its plugin before it
 * registers with the NameNode, and the warm-up runs while the plugin waits for that.
 *
 * <p>Measured on the 2-core test machine: JVM class loading of this code is what made the first
 * Configure take seconds when the CPU was starved (80 ms on a restart, classes loaded). The
 * warm-up does one gRPC health call over a unix socket inside the JVM, which touches the Netty
 * epoll transport, HTTP/2 codec, both gRPC transports and the protobuf runtime, then loads the
 * message classes of the start path. Once per JVM; never throws; daemon thread.
 */
public final class Prewarm {
  private static final Logger LOG = LoggerFactory.getLogger(Prewarm.class);
  private static final AtomicBoolean STARTED = new AtomicBoolean();
  private static volatile Thread thread;
  /** The in-JVM gRPC round trip succeeded. */
  static volatile boolean warmed;

  private Prewarm() {}

  /** Starts the warm-up once per JVM, if the co-process binary (binaryKey) is configured. */
  public static void start(Configuration conf, String binaryKey) {
    try {
      if (conf.getTrimmed(binaryKey, "").isEmpty() || oneOffCommand()
          || !STARTED.compareAndSet(false, true)) {
        return;
      }
      File dir = null;
      try {
        dir = new HookConf(conf, binaryKey).socketDir;
      } catch (Throwable t) {
        // class loading only
      }
      File socketDir = dir;
      Thread t = new Thread(() -> run(socketDir), "newtricks-prewarm");
      t.setDaemon(true);
      thread = t;
      t.start();
    } catch (Throwable t) {
      // never affect the daemon
    }
  }

  /**
   * A NameNode run that formats or bootstraps and exits (it builds FSNamesystem, so the audit
   * logger and the event journal, but never starts plugins): nothing to warm up for.
   */
  static boolean oneOffCommand() {
    String cmd = System.getProperty("sun.java.command", "");
    for (String arg : cmd.split(" ")) {
      switch (arg) {
        case "-format":
        case "-bootstrapStandby":
        case "-initializeSharedEdits":
        case "-recover":
          return true;
        default:
          break;
      }
    }
    return false;
  }

  /** The longest a hook waits for the warm-up before starting anyway. */
  public static final long MAX_WAIT_MS = 15_000;

  /** Waits up to ms for a running warm-up; true if none is running. */
  public static boolean await(long ms) throws InterruptedException {
    Thread t = thread;
    if (t != null) {
      t.join(ms);
      return !t.isAlive();
    }
    return true;
  }

  private static void run(File socketDir) {
    long start = System.nanoTime();
    try {
      loadMessages();
      if (socketDir != null) {
        roundTrip(socketDir);
        warmed = true;
      }
      LOG.info("newtricks: gRPC client and server code loaded in {} ms (warm-up)",
          (System.nanoTime() - start) / 1_000_000);
    } catch (Throwable t) {
      LOG.debug("newtricks: warm-up incomplete: {}", t.toString());
    }
  }

  /** Message and stub classes of the start path and the event stream. */
  private static void loadMessages() {
    io.newtricks.proto.v1.ConfigureRequest.newBuilder().putConf("k", "v").build().toByteArray();
    io.newtricks.proto.v1.ConfigureResponse.getDefaultInstance().getEvents();
    io.newtricks.proto.v1.EventBatch.newBuilder()
        .addEvents(io.newtricks.proto.v1.Event.newBuilder()
            .setNamespace(io.newtricks.proto.v1.NamespaceEvent.getDefaultInstance()))
        .build().toByteArray();
    io.newtricks.proto.v1.DeliverAck.getDefaultInstance().getFilter();
    io.newtricks.proto.v1.ExtensionGrpc.getServiceDescriptor();
    io.newtricks.proto.v1.EventSinkGrpc.getServiceDescriptor();
    io.newtricks.goplugin.GRPCStdioGrpc.getServiceDescriptor();
    io.newtricks.goplugin.GRPCControllerGrpc.getServiceDescriptor();
  }

  /** One health call over a unix socket, server and client in this JVM. */
  private static void roundTrip(File socketDir) throws Exception {
    // The same checks as the supervisor's (a private 0700 dir of the daemon's user): a dir
    // that fails them is left alone, and the hook reports it when it starts.
    CoprocessSupervisor.ensureDir(socketDir);
    File sock = new File(socketDir, "warm-" + ProcessHandle.current().pid() + ".sock");
    Files.deleteIfExists(sock.toPath());
    Server s = null;
    ManagedChannel ch = null;
    try {
      s = UnixSockets.server(sock.getPath()).directExecutor()
          .addService(new HealthGrpc.HealthImplBase() {
            @Override
            public void check(HealthCheckRequest req, StreamObserver<HealthCheckResponse> out) {
              out.onNext(HealthCheckResponse.newBuilder()
                  .setStatus(HealthCheckResponse.ServingStatus.SERVING).build());
              out.onCompleted();
            }
          }).build().start();
      ch = UnixSockets.channel("unix", sock.getPath());
      HealthGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS)
          .check(HealthCheckRequest.newBuilder().setService("warm-up").build());
    } finally {
      if (ch != null) {
        ch.shutdownNow();
      }
      if (s != null) {
        s.shutdownNow();
      }
      Files.deleteIfExists(sock.toPath());
    }
  }
}
