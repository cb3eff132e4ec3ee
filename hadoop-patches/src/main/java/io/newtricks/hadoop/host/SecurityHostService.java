package io.newtricks.hadoop.host;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.AuthorizeProxyRequest;
import io.newtricks.proto.v1.AuthorizeProxyResponse;
import io.newtricks.proto.v1.IsAdminRequest;
import io.newtricks.proto.v1.IsAdminResponse;
import io.newtricks.proto.v1.MapPrincipalRequest;
import io.newtricks.proto.v1.MapPrincipalResponse;
import io.newtricks.proto.v1.SecurityHostGrpc;
import io.newtricks.proto.v1.VerifyDelegationTokenRequest;
import io.newtricks.proto.v1.VerifyDelegationTokenResponse;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenIdentifier;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.HadoopKerberosName;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.ProxyUsers;

/**
 * SecurityHost (host.proto): Hadoop's own identity rules, from this daemon's configuration, for
 * the co-process's public API. Nothing here acts on a user's behalf; it only answers questions.
 */
public final class SecurityHostService extends SecurityHostGrpc.SecurityHostImplBase {
  /** Checks a delegation token's password and liveness; returns its identifier on success. */
  public interface TokenVerifier {
    void verify(DelegationTokenIdentifier id, byte[] identifier, byte[] password) throws Exception;
  }

  private final Configuration conf;
  private final HookMetrics metrics;
  private final TokenVerifier tokens;
  private final String supergroup;

  public SecurityHostService(Configuration conf, HookMetrics metrics, TokenVerifier tokens) {
    this.conf = conf;
    this.metrics = metrics;
    this.tokens = tokens;
    this.supergroup = conf.get(DFSConfigKeys.DFS_PERMISSIONS_SUPERUSERGROUP_KEY,
        DFSConfigKeys.DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT);
  }

  @Override
  public void mapPrincipal(MapPrincipalRequest req, StreamObserver<MapPrincipalResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getPrincipal().isEmpty()) {
        throw new IllegalArgumentException("empty principal");
      }
      String shortName;
      try {
        // The rules are the daemon's hadoop.security.auth_to_local, installed by UGI at login.
        shortName = new HadoopKerberosName(req.getPrincipal()).getShortName();
      } catch (IOException e) {
        // NoMatchingRule: the principal is not one this cluster maps to a user.
        throw new AccessControlException("principal " + req.getPrincipal()
            + " maps to no user under hadoop.security.auth_to_local: " + e.getMessage());
      }
      if (shortName == null || shortName.isEmpty()) {
        throw new AccessControlException("principal " + req.getPrincipal() + " maps to no user");
      }
      return MapPrincipalResponse.newBuilder().setUser(shortName).build();
    });
  }

  @Override
  public void authorizeProxy(AuthorizeProxyRequest req, StreamObserver<AuthorizeProxyResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getRealUser().isEmpty() || req.getUser().isEmpty()) {
        throw new IllegalArgumentException("real_user and user are required");
      }
      String addr = hostOf(req.getRemoteAddr());
      UserGroupInformation real = UserGroupInformation.createRemoteUser(req.getRealUser());
      UserGroupInformation proxy = UserGroupInformation.createProxyUser(req.getUser(), real);
      try {
        // The same check the NameNode's RPC server makes for a proxied connection.
        ProxyUsers.authorize(proxy, addr);
      } catch (AuthorizationException e) {
        throw new AccessControlException(e.getMessage());
      }
      return AuthorizeProxyResponse.getDefaultInstance();
    });
  }

  @Override
  public void isAdmin(IsAdminRequest req, StreamObserver<IsAdminResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (req.getUser().isEmpty()) {
        throw new IllegalArgumentException("empty user");
      }
      String superuser = UserGroupInformation.getLoginUser().getShortUserName();
      boolean admin = req.getUser().equals(superuser);
      if (!admin) {
        // The daemon's group mapping (hadoop.security.group.mapping and its static overrides),
        // as FSPermissionChecker resolves a caller's groups.
        admin = Arrays.asList(UserGroupInformation.createRemoteUser(req.getUser()).getGroupNames())
            .contains(supergroup);
      }
      return IsAdminResponse.newBuilder().setAdmin(admin).setSuperuser(superuser)
          .setSupergroup(supergroup).build();
    });
  }

  @Override
  public void verifyDelegationToken(VerifyDelegationTokenRequest req,
      StreamObserver<VerifyDelegationTokenResponse> out) {
    HostCalls.serve(metrics, out, () -> {
      if (!req.hasToken() || req.getToken().getIdentifier().isEmpty()) {
        throw new IllegalArgumentException("a token is required");
      }
      if (!req.getToken().getKind().isEmpty()
          && !req.getToken().getKind().equals(DelegationTokenIdentifier.HDFS_DELEGATION_KIND.toString())) {
        throw new IllegalArgumentException("token kind " + req.getToken().getKind()
            + " is not " + DelegationTokenIdentifier.HDFS_DELEGATION_KIND);
      }
      if (tokens == null) {
        throw Status.FAILED_PRECONDITION
            .withDescription("delegation tokens are not verified by this daemon").asRuntimeException();
      }
      byte[] ident = req.getToken().getIdentifier().toByteArray();
      byte[] password = req.getToken().getPassword().toByteArray();
      DelegationTokenIdentifier id = new DelegationTokenIdentifier();
      try {
        id.readFields(new DataInputStream(new ByteArrayInputStream(ident)));
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException("malformed delegation token identifier: " + e);
      }
      try {
        tokens.verify(id, ident, password);
      } catch (Exception e) {
        throw new AccessControlException("delegation token rejected: " + e.getMessage());
      }
      UserGroupInformation ugi = id.getUser();
      if (ugi == null) {
        throw new AccessControlException("delegation token names no owner");
      }
      VerifyDelegationTokenResponse.Builder b = VerifyDelegationTokenResponse.newBuilder()
          .setUser(ugi.getShortUserName())
          .setOwner(id.getOwner() == null ? "" : id.getOwner().toString())
          .setMaxDateMs(id.getMaxDate());
      if (ugi.getRealUser() != null) {
        b.setRealUser(ugi.getRealUser().getShortUserName());
      }
      return b.build();
    });
  }

  /** "10.0.0.1:1234" or "[::1]:1234" -> the address ProxyUsers compares with hosts lists. */
  static String hostOf(String addr) {
    if (addr == null || addr.isEmpty()) {
      throw new IllegalArgumentException("remote_addr is required");
    }
    if (addr.startsWith("[")) {
      int end = addr.indexOf(']');
      return end > 0 ? addr.substring(1, end) : addr;
    }
    int colon = addr.lastIndexOf(':');
    if (colon > 0 && addr.indexOf(':') == colon) {
      return addr.substring(0, colon);
    }
    return addr;
  }
}
