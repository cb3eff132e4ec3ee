package io.newtricks.hadoop.host;

import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSClient;
import org.apache.hadoop.hdfs.DFSUtilClient;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenIdentifier;
import org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenSecretManager;
import org.apache.hadoop.hdfs.server.namenode.FSNamesystem;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.Token;

/** How each daemon verifies an HDFS delegation token for SecurityHost. */
public final class DelegationTokens {
  private DelegationTokens() {}

  /**
   * NameNode: the secret manager that issued the token checks its password, expiry and that it
   * was not cancelled (a cancelled token is no longer in its store).
   */
  public static SecurityHostService.TokenVerifier nameNode(NameNode nn) {
    java.lang.reflect.Method getter;
    try {
      // FSNamesystem.getDelegationTokenSecretManager() is package-private; the secret manager's
      // own verifyToken is public. Resolved once at start so a Hadoop without it fails loudly.
      getter = FSNamesystem.class.getDeclaredMethod("getDelegationTokenSecretManager");
      getter.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return (id, ident, password) -> {
        throw new SecretManager.InvalidToken("cannot reach the NameNode's secret manager: " + e);
      };
    }
    return (id, ident, password) -> {
      FSNamesystem ns = nn.getNamesystem();
      DelegationTokenSecretManager sm =
          ns == null ? null : (DelegationTokenSecretManager) getter.invoke(ns);
      if (sm == null) {
        throw new SecretManager.InvalidToken("the NameNode's secret manager is not up");
      }
      sm.verifyToken(id, password);
    };
  }

  /** Positive answers are kept this long on a DataNode, which asks the NameNode. */
  static final long DATANODE_CACHE_MS = 30_000;

  /**
   * DataNode: it holds no delegation-token secrets, so it proves the token by using it for one
   * cheap call (getFileInfo("/")) against the NameNode, as the token's owner. Valid tokens are
   * remembered for DATANODE_CACHE_MS: a token cancelled meanwhile is refused by the NameNode
   * path at once and by the DataNode path within that time.
   */
  public static SecurityHostService.TokenVerifier dataNode(Configuration conf) {
    Map<String, Long> valid = new LinkedHashMap<String, Long>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Long> e) {
        return size() > 1024;
      }
    };
    return (id, ident, password) -> {
      String key = digest(ident, password);
      long now = System.currentTimeMillis();
      synchronized (valid) {
        Long until = valid.get(key);
        if (until != null && until > now) {
          return;
        }
      }
      if (id.getMaxDate() > 0 && id.getMaxDate() < now) {
        throw new SecretManager.InvalidToken("token is past its max date");
      }
      InetSocketAddress nnAddr = DFSUtilClient.getNNAddress(conf);
      Token<DelegationTokenIdentifier> t = new Token<>(ident, password,
          DelegationTokenIdentifier.HDFS_DELEGATION_KIND, SecurityUtil.buildTokenService(nnAddr));
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(id.getUser().getUserName());
      ugi.addToken(t);
      ugi.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
        try (DFSClient c = new DFSClient(nnAddr, conf)) {
          c.getFileInfo("/");
        }
        return null;
      });
      synchronized (valid) {
        valid.put(key, now + DATANODE_CACHE_MS);
      }
    };
  }

  private static String digest(byte[] ident, byte[] password) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    md.update(ident);
    md.update(password);
    StringBuilder sb = new StringBuilder();
    for (byte b : md.digest()) {
      sb.append(String.format("%02x", b));
    }
    return sb.toString();
  }
}
