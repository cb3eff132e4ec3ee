package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.grpc.Status;
import io.newtricks.hadoop.supervise.HookConf;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.Test;

/** Who a host call acts as (host.proto): never the daemon by default. */
public class HostCallsTest {
  private static Status.Code codeOf(Runnable r) {
    try {
      r.run();
    } catch (Throwable t) {
      return StatusMapping.toStatus(t).getStatus().getCode();
    }
    return Status.Code.OK;
  }

  @Test
  public void anEmptyUserIsAnErrorNeverTheDaemon() throws Exception {
    assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> HostCalls.checkCaller("X", "", false)));
    assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> HostCalls.checkCaller("X", null, false)));
    assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> HostCalls.checkCaller("X", "alice", true)));
    assertEquals(Status.Code.OK, codeOf(() -> HostCalls.checkCaller("X", "alice", false)));
    assertEquals(Status.Code.OK, codeOf(() -> HostCalls.checkCaller("X", "", true)));
    try {
      HostCalls.as("X", "", false, () -> "ran");
      fail("an empty user ran");
    } catch (Throwable t) {
      assertEquals(Status.Code.INVALID_ARGUMENT, StatusMapping.toStatus(t).getStatus().getCode());
    }
  }

  @Test
  public void runsAsTheNamedUserOrTheDaemon() throws Exception {
    String daemon = UserGroupInformation.getCurrentUser().getShortUserName();
    assertEquals("alice", HostCalls.as("X", "alice", false,
        () -> UserGroupInformation.getCurrentUser().getShortUserName()));
    assertEquals(daemon, HostCalls.as("X", "", true,
        () -> UserGroupInformation.getCurrentUser().getShortUserName()));
  }

  @Test
  public void limits() {
    assertEquals(Status.Code.PERMISSION_DENIED, codeOf(() -> HostCalls.userOnly("X", "", true)));
    assertEquals(Status.Code.OK, codeOf(() -> HostCalls.userOnly("X", "bob", false)));
    assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> HostCalls.serviceOnly("X", false)));
    HookConf hc = new HookConf(new Configuration(false), HookConf.NAMENODE_BINARY);
    List<String> p = Arrays.asList(hc.serviceXAttrPrefixes.toArray(new String[0]));
    assertEquals(Arrays.asList("user.newtricks."), p);
    assertTrue(HostCalls.serviceXAttrAllowed("user.newtricks.hotspot.hint.h1", p));
    assertFalse(HostCalls.serviceXAttrAllowed("user.other", p));
    assertFalse(HostCalls.serviceXAttrAllowed("trusted.newtricks.x", p));
    assertFalse(HostCalls.serviceXAttrAllowed("", p));
    Configuration c = new Configuration(false);
    c.set("newtricks.hotspot.state.xattr-prefix", "user.hot");
    assertTrue(new HookConf(c, HookConf.NAMENODE_BINARY).serviceXAttrPrefixes.contains("user.hot"));
  }
}
