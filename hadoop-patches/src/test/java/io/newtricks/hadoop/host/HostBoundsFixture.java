package io.newtricks.hadoop.host;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.ReconfigurationException;
import org.apache.hadoop.hdfs.server.namenode.FSNamesystem;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;

/**
 * A NameNodeHostService without a NameNode: its RPC server is a proxy that answers the methods
 * a test names (and records every call), the rest fail; no namesystem; a configuration map
 * stands for the NameNode's reconfigurable properties.
 */
final class HostBoundsFixture {
  /** Answers one NamenodeProtocols method. */
  interface Answer {
    Object answer(Object[] args) throws Exception;
  }

  final Map<String, Answer> answers = new ConcurrentHashMap<>();
  final List<String> calls = new CopyOnWriteArrayList<>();
  final Map<String, String> nnConf = new ConcurrentHashMap<>();
  final List<String> reconfigured = new CopyOnWriteArrayList<>();
  final NameNodeHostService service;
  final HookConf hc;

  HostBoundsFixture(Configuration conf) {
    this(conf, paths -> io.newtricks.proto.v1.SetBalancedReadsResponse.getDefaultInstance());
  }

  HostBoundsFixture(Configuration conf, NameNodeHostService.BalancedReadsControl balanced) {
    InvocationHandler h = (proxy, m, args) -> {
      if (m.getDeclaringClass() == Object.class) {
        switch (m.getName()) {
          case "hashCode":
            return System.identityHashCode(proxy);
          case "equals":
            return proxy == args[0];
          default:
            return "fake NamenodeProtocols";
        }
      }
      calls.add(m.getName());
      Answer a = answers.get(m.getName());
      if (a == null) {
        throw new UnsupportedOperationException(m.getName() + " is not faked");
      }
      return a.answer(args);
    };
    NamenodeProtocols rpc = (NamenodeProtocols) Proxy.newProxyInstance(
        NamenodeProtocols.class.getClassLoader(), new Class<?>[] {NamenodeProtocols.class}, h);
    hc = new HookConf(conf, HookConf.NAMENODE_BINARY);
    service = new NameNodeHostService(null, new NameNodeHostService.Daemon() {
      @Override
      public NamenodeProtocols rpc() {
        return rpc;
      }

      @Override
      public FSNamesystem namesystem() {
        return null;
      }

      @Override
      public String conf(String key) {
        return nnConf.get(key);
      }

      @Override
      public void reconfigure(String key, String value) throws ReconfigurationException {
        reconfigured.add(key + "=" + value);
        if (value == null) {
          nnConf.remove(key);
        } else {
          nnConf.put(key, value);
        }
      }
    }, new HookMetrics("HostBoundsTest"), hc, balanced);
  }

  /** Captures a unary call's answer. */
  static final class Answered<T> implements StreamObserver<T> {
    private final CountDownLatch done = new CountDownLatch(1);
    volatile T value;
    volatile Throwable error;

    @Override
    public void onNext(T v) {
      value = v;
    }

    @Override
    public void onError(Throwable t) {
      error = t;
      done.countDown();
    }

    @Override
    public void onCompleted() {
      done.countDown();
    }

    /** The answer; fails unless the call succeeded within the time. */
    T get() throws InterruptedException {
      if (!done.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("no answer within 30 s");
      }
      if (error != null) {
        throw new AssertionError("call failed: " + error, error);
      }
      return value;
    }

    /** The status code the call failed with (OK if it succeeded). */
    Status.Code code() throws InterruptedException {
      if (!done.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("no answer within 30 s");
      }
      return error == null ? Status.Code.OK : Status.fromThrowable(error).getCode();
    }

    String message() {
      return error == null ? "" : String.valueOf(Status.fromThrowable(error).getDescription());
    }
  }
}
