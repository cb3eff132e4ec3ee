package io.newtricks.hadoop.events;

import static org.junit.Assert.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.UnixSockets;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.Event;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventSinkGrpc;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * The forwarder's CPU per event on the JVM side, by batch size: conversion to the wire type,
 * the batch, and one EventSink/Deliver per batch over a unix socket (to a trivial in-JVM
 * receiver, so the figure includes the receiving end's Java decoding, not namenode-ext's Go).
 * Process CPU time, after JIT warm-up: stable under machine load. Shows how much of an event's
 * cost is per call (the linger setting decides the batch size at a given event rate).
 */
public class ForwardCostTest {
  @Test
  public void cpuPerEventByBatchSize() throws Exception {
    File dir = Files.createTempDirectory("nt-fwd").toFile();
    File sock = new File(dir, "s.sock");
    Server server = UnixSockets.server(sock.getPath()).directExecutor()
        .addService(new EventSinkGrpc.EventSinkImplBase() {
          @Override
          public void deliver(EventBatch b, StreamObserver<DeliverAck> out) {
            out.onNext(DeliverAck.newBuilder().setLastTxid(b.getEventsCount()).build());
            out.onCompleted();
          }
        }).build().start();
    ManagedChannel ch = UnixSockets.channel("unix", sock.getPath());
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    InetAddress addr = InetAddress.getByName("10.1.2.3");
    StringBuilder report = new StringBuilder("FORWARD-COST us CPU/event (process, JVM both ends):");
    try {
      for (int batch : new int[] {1, 16, 128, 1024}) {
        double us = 0;
        for (int round = 0; round < 3; round++) { // the last round counts
          int events = batch == 1 ? 20_000 : 200_000;
          long t0 = os.getProcessCpuTime();
          long txid = 0;
          for (int sent = 0; sent < events; sent += batch) {
            EventBatch.Builder b = EventBatch.newBuilder().setSeq(sent);
            for (int i = 0; i < batch; i++) {
              if (i % 2 == 0) {
                b.addEvents(Event.newBuilder().setNamespace(InotifyTailer.convert(++txid,
                    new org.apache.hadoop.hdfs.inotify.Event.CloseEvent(
                        "/user/alice/data/part-" + txid, 1234, 1_700_000_000_000L))));
              } else {
                b.addEvents(Event.newBuilder().setAudit(EventForwarder.toProto(new AuditRecord(
                    "open", "/user/alice/data/part-" + txid, null, "alice", addr, true,
                    1_700_000_000_000L, null))));
              }
            }
            EventSinkGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                .deliver(b.build());
          }
          us = (os.getProcessCpuTime() - t0) / 1e3 / events;
        }
        report.append(String.format(" batch %d: %.2f;", batch, us));
      }
    } finally {
      ch.shutdownNow();
      server.shutdownNow();
      sock.delete();
      dir.delete();
    }
    System.out.println(report);
    assertTrue(report.toString(), report.length() > 0);
  }
}
