package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.newtricks.hadoop.supervise.CoprocessSupervisor;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.hadoop.supervise.UnixSockets;
import io.newtricks.proto.v1.IsAdminRequest;
import io.newtricks.proto.v1.SecurityHostGrpc;
import io.newtricks.proto.v1.Token;
import io.newtricks.proto.v1.VerifyDelegationTokenRequest;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenIdentifier;
import org.apache.hadoop.io.Text;
import org.junit.Test;

public class HostServerTest {
  private static File tempDir() throws IOException {
    // Short path: unix socket paths are limited to 107 bytes.
    File d = Files.createTempDirectory(new File("/tmp").toPath(), "nthst").toFile();
    d.deleteOnExit();
    return d;
  }

  @Test
  public void ensureDirCreatesPrivateDirAndRefusesOpenOnes() throws Exception {
    File base = tempDir();
    File made = new File(base, "sock");
    CoprocessSupervisor.ensureDir(made);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(made.toPath())));

    File open = new File(base, "open");
    Files.createDirectory(open.toPath(), PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxr-xr-x")));
    Files.setPosixFilePermissions(open.toPath(), PosixFilePermissions.fromString("rwxr-xr-x"));
    try {
      CoprocessSupervisor.ensureDir(open);
      fail("a group/other readable socket dir was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("group or other access is refused"));
    }

    File link = new File(base, "link");
    Files.createSymbolicLink(link.toPath(), made.toPath());
    try {
      CoprocessSupervisor.ensureDir(link);
      fail("a symlinked socket dir was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("not a directory"));
    }
  }

  @Test
  public void refusesDirOwnedBySomeoneElse() throws Exception {
    // /tmp is shared by everybody: refused for its mode, or (non-root) for its owner as well.
    try {
      CoprocessSupervisor.ensureDir(new File("/tmp"));
      fail("/tmp accepted as a socket dir");
    } catch (IOException expected) {
      // group/other access or foreign owner
    }
    if (!"root".equals(System.getProperty("user.name"))) {
      return; // only root can hand a private dir to another user
    }
    File d = new File(tempDir(), "theirs");
    CoprocessSupervisor.ensureDir(d);
    Files.setOwner(d.toPath(), d.toPath().getFileSystem().getUserPrincipalLookupService()
        .lookupPrincipalByName("nobody"));
    try {
      CoprocessSupervisor.ensureDir(d);
      fail("a 0700 dir owned by nobody was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("is owned by nobody"));
    }
  }

  @Test
  public void hostOf() {
    assertEquals("10.0.0.1", SecurityHostService.hostOf("10.0.0.1:1234"));
    assertEquals("10.0.0.1", SecurityHostService.hostOf("10.0.0.1"));
    assertEquals("::1", SecurityHostService.hostOf("[::1]:1234"));
    assertEquals("fe80::1", SecurityHostService.hostOf("fe80::1"));
    try {
      SecurityHostService.hostOf("");
      fail("empty remote address accepted");
    } catch (IllegalArgumentException expected) {
      // the co-process must always say where the call came from
    }
  }

  private static Token token(String owner) throws IOException {
    DelegationTokenIdentifier id = new DelegationTokenIdentifier(new Text(owner), new Text("renewer"),
        null);
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    id.write(new DataOutputStream(b));
    return Token.newBuilder().setIdentifier(ByteString.copyFrom(b.toByteArray()))
        .setPassword(ByteString.copyFromUtf8("pw")).setKind("HDFS_DELEGATION_TOKEN").build();
  }

  /**
   * With 1 handler and a queue of 1, two calls blocked in the host are admitted and a third is
   * refused at once with RESOURCE_EXHAUSTED; once they finish, calls are admitted again.
   */
  @Test
  public void admissionIsBounded() throws Exception {
    Configuration conf = new Configuration(false);
    File dir = new File(tempDir(), "s");
    conf.set(HookConf.SOCKET_DIR, dir.getPath());
    conf.setInt(HookConf.HOST_HANDLERS, 1);
    conf.setInt(HookConf.HOST_QUEUE, 1);
    HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    CoprocessSupervisor.ensureDir(dir);

    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SecurityHostService.TokenVerifier blocking = (id, ident, pw) -> {
      entered.countDown();
      release.await(30, TimeUnit.SECONDS);
    };
    HostServer h = HostServer.start(hc, "t.sock",
        new SecurityHostService(conf, new HookMetrics("HostServerTest"), blocking));
    ManagedChannel ch = UnixSockets.channel("unix", new File(dir, "t.sock").getPath());
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      SecurityHostGrpc.SecurityHostBlockingStub stub = SecurityHostGrpc.newBlockingStub(ch);
      VerifyDelegationTokenRequest req = VerifyDelegationTokenRequest.newBuilder()
          .setToken(token("alice")).build();
      List<Future<?>> held = new ArrayList<>();
      held.add(pool.submit(() -> stub.verifyDelegationToken(req)));
      assertTrue("first call never reached the host", entered.await(10, TimeUnit.SECONDS));
      held.add(pool.submit(() -> stub.verifyDelegationToken(req))); // queued behind it
      // Wait until the second call is admitted (it waits for the only handler thread).
      long deadline = System.currentTimeMillis() + 10_000;
      while (h.admitted() < 2) {
        if (System.currentTimeMillis() > deadline) {
          fail("the second call was never admitted: " + h.admitted());
        }
        Thread.sleep(10);
      }
      try {
        stub.withDeadlineAfter(5, TimeUnit.SECONDS)
            .isAdmin(IsAdminRequest.newBuilder().setUser("alice").build());
        fail("a third call was admitted beyond handlers + queue");
      } catch (StatusRuntimeException e) {
        assertEquals(e.toString(), Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getMessage(), e.getMessage().contains(HookConf.HOST_QUEUE));
      }
      release.countDown();
      for (Future<?> f : held) {
        f.get(10, TimeUnit.SECONDS);
      }
      // Slots are released: a call's slot is freed in the server's onComplete, which may run
      // after its client has the answer, so wait for the count before calling again.
      deadline = System.currentTimeMillis() + 10_000;
      while (h.admitted() > 0) {
        if (System.currentTimeMillis() > deadline) {
          fail("slots never released after the calls completed: " + h.admitted());
        }
        Thread.sleep(10);
      }
      // The admin check is served again.
      stub.withDeadlineAfter(5, TimeUnit.SECONDS)
          .isAdmin(IsAdminRequest.newBuilder().setUser("alice").build());
    } finally {
      release.countDown();
      pool.shutdownNow();
      ch.shutdownNow();
      h.stop();
    }
  }
}
