package io.newtricks.hadoop.supervise;

import com.google.protobuf.Empty;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.newtricks.goplugin.GRPCControllerGrpc;
import io.newtricks.goplugin.GRPCStdioGrpc;
import io.newtricks.goplugin.StdioData;
import io.newtricks.goplugin.health.HealthCheckRequest;
import io.newtricks.goplugin.health.HealthCheckResponse;
import io.newtricks.goplugin.health.HealthGrpc;
import io.newtricks.proto.v1.ConfigureRequest;
import io.newtricks.proto.v1.ConfigureResponse;
import io.newtricks.proto.v1.ExtensionGrpc;
import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Launches a Go co-process as a hashicorp/go-plugin host and keeps it running.
 *
 * <p>One daemon thread does everything (launch, handshake, health, restart with exponential
 * backoff, Configure), so {@link #start()} returns at once and a missing or crashing binary can
 * never stop or slow the Hadoop daemon. Callers use {@link #channel()} while
 * {@link #isHealthy()} is true.
 */
public final class CoprocessSupervisor implements CoprocessLink {
  private static final Logger LOG = LoggerFactory.getLogger(CoprocessSupervisor.class);
  /** go-plugin registers its health service under this name. */
  static final String HEALTH_SERVICE = "plugin";
  private static final int MAX_HEALTH_FAILURES = 3;
  private static final long HEALTHY_RESET_MS = 60_000;

  private final String kind;        // "namenode" | "datanode"
  private final String daemonId;
  private final String hostAddress; // "unix:///..." of the host gRPC server
  private final Map<String, String> conf;
  private final HookConf hc;
  private final HookMetrics metrics;
  private final File logFile;
  /**
   * The child's working directory: private (0700, the daemon's user, checked like the socket
   * dir) and its own, never the daemon's, so a relative path the child is handed (in a request
   * or a file it reads) cannot resolve against where the daemon runs (e.g. "/" above a
   * DataNode's data directories).
   */
  private final File workDir;

  private final Object lock = new Object();
  private volatile boolean running;
  private volatile boolean healthy;
  /** System.nanoTime() of the last call the child answered (0: none since its launch). */
  private volatile long lastAnswerNanos;
  private volatile ManagedChannel channel;
  private volatile int generation = -1;
  private volatile String apiAddress = "";
  private volatile String metricsAddress = "";
  private volatile ConfigureResponse configured;
  private Process process;          // guarded by lock
  private Handshake handshake;      // guarded by lock
  private Thread thread;
  private Thread shutdownHook;
  /** Tests: sees each wait before a restart attempt. */
  volatile java.util.function.LongConsumer backoffListener;

  public CoprocessSupervisor(String kind, String daemonId, String hostAddress, Map<String, String> conf,
      HookConf hc, HookMetrics metrics) {
    this.kind = kind;
    this.daemonId = daemonId;
    this.hostAddress = hostAddress;
    this.conf = conf;
    this.hc = hc;
    this.metrics = metrics;
    this.logFile = new File(hc.logDir, "newtricks-" + kind + "-ext.log");
    this.workDir = workDir(hc.socketDir, kind, ProcessHandle.current().pid());
  }

  /**
   * {@code <socket dir>/<kind>-ext-<pid>.cwd}: one per daemon on the host (two DataNodes of one
   * user never share one), under the socket dir, which is private to the daemon's user.
   */
  static File workDir(File socketDir, String kind, long pid) {
    return new File(socketDir.getAbsoluteFile(), kind + "-ext-" + pid + ".cwd");
  }

  /** The directory the child runs in (see {@link #workDir}). */
  File workDir() {
    return workDir;
  }

  /** Starts supervising on a daemon thread. Never blocks, never throws. */
  public void start() {
    // Load what the exit hook needs now: at JVM exit (or after the jar was replaced on disk)
    // class loading may fail, and the child must be stopped anyway.
    GRPCControllerGrpc.getShutdownMethod();
    io.newtricks.goplugin.Empty.getDefaultInstance();
    synchronized (lock) {
      if (running) {
        return;
      }
      running = true;
      shutdownHook = new Thread(this::killOnExit, "newtricks-" + kind + "-ext-exit");
      try {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        shutdownHook = null; // JVM already exiting
      }
      thread = new Thread(this::superviseLoop, "newtricks-" + kind + "-ext-supervisor");
      thread.setDaemon(true);
      thread.start();
    }
  }

  /** Stops the child (GRPCController/Shutdown, grace period, kill) and the supervisor thread. */
  public void stop() {
    Thread t;
    synchronized (lock) {
      if (!running) {
        return;
      }
      running = false;
      t = thread;
      if (shutdownHook != null) {
        try {
          Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
          // already shutting down: the hook kills the child
        }
      }
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(hc.shutdownGraceMs + 3_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    stopChild(hc.shutdownGraceMs);
    removeWorkDir();
  }

  /**
   * Creates the working directory (0700) or checks the one a previous child of this daemon
   * left, and removes those of daemons that are gone (empty ones only: whatever a child left in
   * its directory is kept for its owner to look at).
   */
  private void prepareWorkDir() throws IOException {
    ensureDir(workDir);
    String prefix = kind + "-ext-";
    File[] siblings = hc.socketDir.getAbsoluteFile().listFiles(
        (d, name) -> name.startsWith(prefix) && name.endsWith(".cwd"));
    if (siblings == null) {
      return;
    }
    for (File f : siblings) {
      String pid = f.getName().substring(prefix.length(), f.getName().length() - ".cwd".length());
      try {
        if (!ProcessHandle.of(Long.parseLong(pid)).isPresent()) {
          Files.deleteIfExists(f.toPath()); // fails (kept) unless empty
        }
      } catch (NumberFormatException | IOException e) {
        // not one of ours, or not empty
      }
    }
  }

  private void removeWorkDir() {
    try {
      Files.deleteIfExists(workDir.toPath());
    } catch (IOException e) {
      LOG.debug("newtricks: {} kept: {}", workDir, e.toString());
    }
  }

  /** The channel to the current child; null while none is up. */
  @Override
  public ManagedChannel channel() {
    return channel;
  }

  /** True once the child passed handshake, health and Configure, until it fails. */
  @Override
  public boolean isHealthy() {
    return healthy;
  }

  @Override
  public void answered() {
    lastAnswerNanos = System.nanoTime();
  }

  /**
   * Whether the watch loop must send a health check now: not when the child answered another
   * call (a Deliver) within the last interval, which shows as much as the check would.
   */
  boolean healthCheckDue(long nowNanos) {
    long last = lastAnswerNanos;
    return last == 0 || nowNanos - last >= TimeUnit.MILLISECONDS.toNanos(hc.healthIntervalMs);
  }

  /** How many times the child was (re)started successfully, minus one; -1 before the first. */
  @Override
  public int generation() {
    return generation;
  }

  String apiAddress() {
    return apiAddress;
  }

  String metricsAddress() {
    return metricsAddress;
  }

  /** The current child's answer to Configure (its event subscription); null before the first. */
  @Override
  public ConfigureResponse configureResponse() {
    return configured;
  }

  File logFile() {
    return logFile;
  }

  private void superviseLoop() {
    long backoff = hc.backoffInitialMs;
    int attempt = 0;
    boolean everStarted = false;
    while (running) {
      String why;
      try {
        launch(generation + 1);
        generation = generation + 1;
        healthy = true;
        metrics.coprocessHealthy.set(1);
        metrics.coprocessStarts.incr();
        if (everStarted) {
          metrics.coprocessRestarts.incr();
        }
        everStarted = true;
        attempt = 0;
        LOG.info("newtricks: {}-ext up (generation {}, {}), log {}", kind, generation,
            handshake, logFile);
        long healthySince = System.currentTimeMillis();
        why = watch();
        if (System.currentTimeMillis() - healthySince >= HEALTHY_RESET_MS) {
          backoff = hc.backoffInitialMs;
        }
      } catch (InterruptedException e) {
        break;
      } catch (Throwable t) {
        metrics.coprocessStartFailures.incr();
        why = "start failed: " + message(t);
      }
      healthy = false;
      metrics.coprocessHealthy.set(0);
      stopChild(running ? 0 : hc.shutdownGraceMs);
      if (!running) {
        break;
      }
      attempt++;
      LOG.warn("newtricks: {}-ext {} (attempt {}); restarting in {} ms; the {} is unaffected. "
          + "Co-process log: {}", kind, why, attempt, backoff, kind, logFile);
      java.util.function.LongConsumer l = backoffListener;
      if (l != null) {
        l.accept(backoff);
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        break;
      }
      backoff = Math.min(backoff * 2, hc.backoffMaxMs);
    }
    healthy = false;
    metrics.coprocessHealthy.set(0);
  }

  /** Launches, handshakes, connects, health-checks and configures one child. */
  private void launch(int gen) throws Exception {
    File bin = new File(hc.binary);
    if (!bin.isFile() || !bin.canExecute()) {
      throw new IOException("binary " + hc.binary + " (" + HookConf.binaryKey(kind)
          + ") is missing or not executable");
    }
    ensureDir(hc.socketDir);
    prepareWorkDir();
    hc.logDir.mkdirs();
    appendLog("---- " + Instant.now() + " newtricks: starting " + bin + " generation " + gen
        + " in " + workDir + " ----\n");
    lastAnswerNanos = 0; // answers from a previous child say nothing about this one
    // Absolute paths: the child starts in its own directory, not the daemon's.
    ProcessBuilder pb = new ProcessBuilder(bin.getAbsolutePath());
    pb.directory(workDir);
    Map<String, String> env = pb.environment();
    env.put(Handshake.COOKIE_KEY, Handshake.COOKIE_VALUE);
    env.put("PLUGIN_PROTOCOL_VERSIONS", Integer.toString(Handshake.APP_VERSION));
    env.put("PLUGIN_UNIX_SOCKET_DIR", hc.socketDir.getAbsolutePath());
    // A relative PWD inherited from the daemon's shell would name the daemon's directory.
    env.put("PWD", workDir.getPath());
    // Lets the child notice a dead parent (go-plugin does not): kill -9 of the JVM skips hooks.
    env.put("NEWTRICKS_PARENT_PID", Long.toString(ProcessHandle.current().pid()));
    env.put("NEWTRICKS_DAEMON_KIND", kind);
    pb.redirectError(ProcessBuilder.Redirect.appendTo(logFile));
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    Process p = pb.start();
    synchronized (lock) {
      process = p;
      handshake = null;
    }
    CompletableFuture<String> line = new CompletableFuture<>();
    Thread drain = new Thread(() -> drainStdout(p, line), "newtricks-" + kind + "-ext-stdout");
    drain.setDaemon(true);
    drain.start();

    Handshake hs;
    try {
      hs = Handshake.parse(line.get(hc.handshakeTimeoutMs, TimeUnit.MILLISECONDS));
    } catch (TimeoutException e) {
      throw new IOException("no go-plugin handshake within " + hc.handshakeTimeoutMs + " ms");
    } catch (ExecutionException e) {
      throw new IOException(message(e.getCause()));
    }
    ManagedChannel ch = UnixSockets.channel(hs.network, hs.address);
    synchronized (lock) {
      handshake = hs;
      channel = ch;
    }
    startStdio(ch);
    long deadline = System.currentTimeMillis() + hc.handshakeTimeoutMs;
    while (true) {
      try {
        if (checkHealth(ch)) {
          break;
        }
      } catch (RuntimeException e) {
        if (System.currentTimeMillis() > deadline) {
          throw new IOException("health check failed: " + message(e));
        }
      }
      if (!p.isAlive()) {
        throw new IOException("exited during startup with code " + p.exitValue());
      }
      Thread.sleep(100);
    }
    ConfigureResponse resp = ExtensionGrpc.newBlockingStub(ch)
        .withDeadlineAfter(hc.handshakeTimeoutMs, TimeUnit.MILLISECONDS)
        .configure(ConfigureRequest.newBuilder()
            .setDaemonKind(kind)
            .setDaemonId(daemonId)
            .setHostAddress(hostAddress)
            .setGeneration(gen)
            .putAllConf(conf)
            .build());
    apiAddress = resp.getApiAddress();
    metricsAddress = resp.getMetricsAddress();
    configured = resp;
  }

  /** Health-checks until the child fails; returns why it is considered down. */
  private String watch() throws InterruptedException {
    int failures = 0;
    while (running) {
      Thread.sleep(hc.healthIntervalMs);
      Process p;
      ManagedChannel ch;
      synchronized (lock) {
        p = process;
        ch = channel;
      }
      if (p == null || !p.isAlive()) {
        return "exited with code " + (p == null ? "?" : Integer.toString(p.exitValue()));
      }
      if (!healthCheckDue(System.nanoTime())) {
        // A Deliver was answered within the interval: as good as a health check, and one
        // call a second fewer at rest (the forwarder's heartbeat) or under load.
        metrics.healthChecksSkipped.incr();
        failures = 0;
        continue;
      }
      String err;
      try {
        err = checkHealth(ch) ? null : "not SERVING";
      } catch (RuntimeException e) {
        err = message(e);
      }
      if (err == null) {
        failures = 0;
        continue;
      }
      metrics.healthCheckFailures.incr();
      failures++;
      if (failures >= MAX_HEALTH_FAILURES) {
        return "failed " + failures + " health checks (" + err + ")";
      }
    }
    return "stopped";
  }

  private boolean checkHealth(ManagedChannel ch) {
    HealthCheckResponse r = HealthGrpc.newBlockingStub(ch)
        .withDeadlineAfter(Math.max(500, hc.healthIntervalMs), TimeUnit.MILLISECONDS)
        .check(HealthCheckRequest.newBuilder().setService(HEALTH_SERVICE).build());
    return r.getStatus() == HealthCheckResponse.ServingStatus.SERVING;
  }

  /** Shuts the child down: Shutdown RPC, wait graceMs, then kill. Idempotent. */
  private void stopChild(long graceMs) {
    Process p;
    ManagedChannel ch;
    Handshake hs;
    synchronized (lock) {
      p = process;
      ch = channel;
      hs = handshake;
      process = null;
      channel = null;
      handshake = null;
    }
    healthy = false;
    try {
      if (p != null && p.isAlive() && ch != null && graceMs > 0) {
        try {
          GRPCControllerGrpc.newBlockingStub(ch)
              .withDeadlineAfter(Math.min(graceMs, 1_000), TimeUnit.MILLISECONDS)
              .shutdown(io.newtricks.goplugin.Empty.getDefaultInstance());
        } catch (RuntimeException e) {
          // The child may close the connection while answering; either way we wait and kill.
        }
        p.waitFor(graceMs, TimeUnit.MILLISECONDS);
      }
    } catch (Throwable t) {
      // Whatever failed (even class loading during JVM exit), the kill below must still happen.
    } finally {
      if (p != null && p.isAlive()) {
        p.destroyForcibly();
        try {
          p.waitFor(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    if (ch != null) {
      ch.shutdownNow();
    }
    // A killed child leaves its socket behind; remove it if it is ours to remove.
    if (hs != null && hs.network.equals("unix")) {
      Path sock = Paths.get(hs.address);
      if (sock.getParent() != null && sock.getParent().equals(hc.socketDir.toPath())) {
        try {
          Files.deleteIfExists(sock);
        } catch (IOException e) {
          LOG.debug("newtricks: remove {}", sock, e);
        }
      }
    }
  }

  private void killOnExit() {
    stopChild(Math.min(hc.shutdownGraceMs, 1_000));
  }

  /** Reads the handshake line, then copies the rest of stdout to the log until EOF. */
  private void drainStdout(Process p, CompletableFuture<String> first) {
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line = r.readLine();
      if (line == null) {
        int code = -1;
        try {
          p.waitFor(1, TimeUnit.SECONDS);
          code = p.isAlive() ? -1 : p.exitValue();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        first.completeExceptionally(new IOException(
            "exited before the go-plugin handshake (code " + code + ")"));
        return;
      }
      first.complete(line);
      while ((line = r.readLine()) != null) {
        appendLog("[stdout] " + line + "\n");
      }
    } catch (Throwable t) {
      first.completeExceptionally(t);
    }
  }

  /** Drains go-plugin's GRPCStdio stream so the child never blocks on a full stdio pipe. */
  private void startStdio(ManagedChannel ch) {
    try {
      GRPCStdioGrpc.newStub(ch).streamStdio(Empty.getDefaultInstance(),
          new StreamObserver<StdioData>() {
            @Override
            public void onNext(StdioData d) {
              appendLog(d.getData().toStringUtf8());
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
          });
    } catch (RuntimeException e) {
      LOG.debug("newtricks: GRPCStdio unavailable", e);
    }
  }

  private synchronized void appendLog(String s) {
    try (OutputStream out = new FileOutputStream(logFile, true)) {
      out.write(s.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // The log is a convenience; never let it break supervision.
    }
  }

  /**
   * Creates the socket dir with mode 0700, or verifies an existing one: it must be a real
   * directory (not a symlink) owned by this daemon's user with no group or other access, or
   * anyone else could connect to the unix sockets in it (the host service answers any caller
   * that can open them) or replace them. The host server and the warm-up make theirs with it.
   */
  public static void ensureDir(File dir) throws IOException {
    java.nio.file.Path p = dir.toPath();
    java.util.Set<java.nio.file.attribute.PosixFilePermission> only =
        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------");
    if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      if (p.getParent() != null) {
        Files.createDirectories(p.getParent());
      }
      try {
        Files.createDirectory(p, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(only));
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // created meanwhile: verified below like any existing directory
      }
      // createDirectory's mode is filtered by the umask; never wider than 0700 anyway.
      Files.setPosixFilePermissions(p, only);
    }
    checkPrivateDir(p);
  }

  /** Throws unless p is a directory owned by this process's user with no group/other bits. */
  static void checkPrivateDir(java.nio.file.Path p) throws IOException {
    java.nio.file.attribute.PosixFileAttributes a = Files.readAttributes(p,
        java.nio.file.attribute.PosixFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    if (!a.isDirectory()) {
      throw new IOException(p + " (" + HookConf.SOCKET_DIR + ") is not a directory");
    }
    String me = System.getProperty("user.name");
    if (!a.owner().getName().equals(me)) {
      throw new IOException(p + " (" + HookConf.SOCKET_DIR + ") is owned by " + a.owner().getName()
          + ", not by " + me + ": refusing to put sockets there");
    }
    for (java.nio.file.attribute.PosixFilePermission perm : a.permissions()) {
      if (!perm.name().startsWith("OWNER_")) {
        throw new IOException(p + " (" + HookConf.SOCKET_DIR + ") has mode "
            + java.nio.file.attribute.PosixFilePermissions.toString(a.permissions())
            + ": group or other access is refused (chmod 700 it)");
      }
    }
  }

  private static String message(Throwable t) {
    if (t == null) {
      return "unknown error";
    }
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m;
  }
}
