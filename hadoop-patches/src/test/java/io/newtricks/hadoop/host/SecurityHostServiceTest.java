package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.AuthorizeProxyRequest;
import io.newtricks.proto.v1.AuthorizeProxyResponse;
import io.newtricks.proto.v1.IsAdminRequest;
import io.newtricks.proto.v1.IsAdminResponse;
import io.newtricks.proto.v1.MapPrincipalRequest;
import io.newtricks.proto.v1.MapPrincipalResponse;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.HadoopKerberosName;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.junit.BeforeClass;
import org.junit.Test;

/** SecurityHost answers with Hadoop's own rules (auth_to_local, proxy users, supergroup). */
public class SecurityHostServiceTest {
  private static SecurityHostService svc;

  /** Captures one unary answer. */
  static final class Answer<T> implements StreamObserver<T> {
    T value;
    Status error;

    @Override
    public void onNext(T v) {
      value = v;
    }

    @Override
    public void onError(Throwable t) {
      error = Status.fromThrowable(t);
    }

    @Override
    public void onCompleted() {}
  }

  @BeforeClass
  public static void setUp() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.proxyuser.svc.hosts", "10.0.0.1");
    conf.set("hadoop.proxyuser.svc.users", "alice");
    conf.set("hadoop.user.group.static.mapping.overrides", "admin=supergroup;alice=;bob=;svc=");
    ProxyUsers.refreshSuperUserGroupsConfiguration(conf);
    Groups.getUserToGroupsMappingServiceWithLoadedConfiguration(conf);
    // UGI keeps the Groups it was first initialized with: a test that ran a doAs earlier in
    // this JVM would leave it the default mapping. (Resets auth_to_local, set below.)
    org.apache.hadoop.security.UserGroupInformation.setConfiguration(conf);
    // Users of EXAMPLE.COM map to their first component; ops@CORP.COM maps to "hdfsops";
    // nobody else maps.
    HadoopKerberosName.setRules("RULE:[1:$1@$0](.*@EXAMPLE\\.COM)s/@.*//\n"
        + "RULE:[2:$1@$0](hdfs@EXAMPLE\\.COM)s/.*/hdfs/\n"
        + "RULE:[1:$1@$0](ops@CORP\\.COM)s/.*/hdfsops/");
    svc = new SecurityHostService(conf, new HookMetrics("SecurityHostServiceTest"), null);
  }

  private static Answer<MapPrincipalResponse> map(String principal) {
    Answer<MapPrincipalResponse> a = new Answer<>();
    svc.mapPrincipal(MapPrincipalRequest.newBuilder().setPrincipal(principal).build(), a);
    return a;
  }

  @Test
  public void mapsPrincipalsWithAuthToLocal() {
    assertEquals("alice", map("alice@EXAMPLE.COM").value.getUser());
    assertEquals("hdfs", map("hdfs/nn1.example.com@EXAMPLE.COM").value.getUser());
    assertEquals("hdfsops", map("ops@CORP.COM").value.getUser());
    Answer<MapPrincipalResponse> foreign = map("alice@EVIL.ORG");
    assertNotNull("a principal no rule maps was accepted", foreign.error);
    assertEquals(Status.Code.PERMISSION_DENIED, foreign.error.getCode());
    assertEquals(Status.Code.INVALID_ARGUMENT, map("").error.getCode());
  }

  private static Status.Code proxy(String real, String user, String addr) {
    Answer<AuthorizeProxyResponse> a = new Answer<>();
    svc.authorizeProxy(AuthorizeProxyRequest.newBuilder().setRealUser(real).setUser(user)
        .setRemoteAddr(addr).build(), a);
    return a.error == null ? Status.Code.OK : a.error.getCode();
  }

  @Test
  public void proxyUsersAsConfigured() {
    assertEquals(Status.Code.OK, proxy("svc", "alice", "10.0.0.1:4567"));
    assertEquals(Status.Code.PERMISSION_DENIED, proxy("svc", "bob", "10.0.0.1:4567"));
    assertEquals(Status.Code.PERMISSION_DENIED, proxy("svc", "alice", "10.0.0.2:4567"));
    assertEquals(Status.Code.PERMISSION_DENIED, proxy("bob", "alice", "10.0.0.1:4567"));
    assertEquals(Status.Code.INVALID_ARGUMENT, proxy("svc", "", "10.0.0.1:4567"));
  }

  @Test
  public void adminIsSuperuserOrSupergroup() {
    Answer<IsAdminResponse> a = new Answer<>();
    svc.isAdmin(IsAdminRequest.newBuilder().setUser("admin").build(), a);
    assertTrue("admin is in supergroup", a.value.getAdmin());
    assertEquals("supergroup", a.value.getSupergroup());
    Answer<IsAdminResponse> b = new Answer<>();
    svc.isAdmin(IsAdminRequest.newBuilder().setUser("bob").build(), b);
    assertFalse("bob is no admin", b.value.getAdmin());
  }
}
