package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import org.apache.hadoop.conf.ReconfigurationException;
import org.apache.hadoop.fs.InvalidPathException;
import org.apache.hadoop.hdfs.protocol.NSQuotaExceededException;
import org.apache.hadoop.hdfs.server.namenode.SafeModeException;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RetriableException;
import org.apache.hadoop.ipc.StandbyException;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.token.SecretManager;
import org.junit.Test;

public class StatusMappingTest {
  private static Status.Code code(Throwable t) {
    return StatusMapping.toStatus(t).getStatus().getCode();
  }

  @Test
  public void mapsHadoopExceptions() {
    Object[][] cases = {
      {new FileNotFoundException("x"), Status.Code.NOT_FOUND},
      {new AccessControlException("x"), Status.Code.PERMISSION_DENIED},
      {new SecretManager.InvalidToken("x"), Status.Code.PERMISSION_DENIED},
      {new SafeModeException("x"), Status.Code.FAILED_PRECONDITION},
      {new StandbyException("x"), Status.Code.FAILED_PRECONDITION},
      {new RetriableException("x"), Status.Code.UNAVAILABLE},
      {new NSQuotaExceededException("x"), Status.Code.RESOURCE_EXHAUSTED},
      {new InvalidPathException("x"), Status.Code.INVALID_ARGUMENT},
      {new IllegalArgumentException("x"), Status.Code.INVALID_ARGUMENT},
      {new ReconfigurationException("p", "n", "o"), Status.Code.INVALID_ARGUMENT},
      {new IOException("disk"), Status.Code.INTERNAL},
      {new NullPointerException(), Status.Code.INTERNAL},
      {new UndeclaredThrowableException(new FileNotFoundException("y")), Status.Code.NOT_FOUND},
      {new RemoteException(AccessControlException.class.getName(), "no"), Status.Code.PERMISSION_DENIED},
      {Status.UNAVAILABLE.asRuntimeException(), Status.Code.UNAVAILABLE},
    };
    for (Object[] c : cases) {
      assertEquals(c[0].toString(), c[1], code((Throwable) c[0]));
    }
  }

  @Test
  public void keepsTheMessage() {
    StatusRuntimeException e = StatusMapping.toStatus(new FileNotFoundException("/a/b missing"));
    assertTrue(e.getStatus().getDescription(), e.getStatus().getDescription().contains("/a/b missing"));
  }
}
