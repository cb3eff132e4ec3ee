package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.fail;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.newtricks.hadoop.supervise.CoprocessSupervisor;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.hadoop.supervise.UnixSockets;
import io.newtricks.proto.v1.MapPrincipalRequest;
import io.newtricks.proto.v1.SecurityHostGrpc;
import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/** A request larger than newtricks.host.max-message-bytes never reaches a host service. */
public class HostMessageBoundTest {
  @Test
  public void anOversizedRequestIsRefusedByTheTransport() throws Exception {
    File dir = new File(Files.createTempDirectory(new File("/tmp").toPath(), "ntmsg").toFile(), "s");
    Configuration conf = new Configuration(false);
    conf.set(HookConf.SOCKET_DIR, dir.getPath());
    conf.setInt(HookConf.HOST_MAX_MESSAGE_BYTES, 128 << 10);
    HookConf hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    CoprocessSupervisor.ensureDir(dir);
    HostServer h = HostServer.start(hc, "m.sock",
        new SecurityHostService(conf, new HookMetrics("HostMessageBoundTest"), null));
    ManagedChannel ch = UnixSockets.channel("unix", new File(dir, "m.sock").getPath());
    try {
      SecurityHostGrpc.SecurityHostBlockingStub stub = SecurityHostGrpc.newBlockingStub(ch)
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      try {
        stub.mapPrincipal(MapPrincipalRequest.newBuilder().setPrincipal("a".repeat(200 << 10)).build());
        fail("a 200 KiB request was served under a 128 KiB bound");
      } catch (StatusRuntimeException e) {
        assertEquals(e.toString(), Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
      }
      // A request within the bound reaches the service (which answers for itself).
      try {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS)
            .mapPrincipal(MapPrincipalRequest.newBuilder().setPrincipal("alice@EXAMPLE.COM").build());
      } catch (StatusRuntimeException e) {
        assertNotEquals(e.toString(), Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
      }
    } finally {
      ch.shutdownNow();
      h.stop();
    }
  }
}
