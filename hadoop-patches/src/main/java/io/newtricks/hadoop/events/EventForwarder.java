package io.newtricks.hadoop.events;

import io.grpc.ManagedChannel;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.AuditEvent;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.Event;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import io.newtricks.proto.v1.EventSinkGrpc;
import io.newtricks.proto.v1.NameNodeState;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One background thread that drives the {@link NamespaceTailer}, builds {@link EventBatch}es from
 * namespace events and the audit queue (at most newtricks.events.batch.max events, or whatever
 * arrived within newtricks.events.linger.ms), and calls EventSink/Deliver with a deadline.
 *
 * <p>While no co-process is healthy it does nothing at all (and the audit logger queues
 * nothing). A batch that fails is retried once the co-process is healthy again; a new
 * co-process gets, first, every namespace event after the last txid it acknowledged durable, so
 * namespace events arrive in txid order, at least once, and the receiver drops repeats by txid.
 * That durable txid is persisted (newtricks.events.state.file), so a restarted NameNode resumes
 * after it too. Audit events are best effort: the audit queue is bounded and every batch carries
 * the total dropped so far.
 *
 * <p>The co-process's subscription can change after Configure (a subsystem switched on, a
 * {@code RecentEvents} interest): it answers every Deliver with its filter when that changed.
 * So that a change reaches the hook even when nothing is being sent (nothing was subscribed,
 * or nothing subscribed happens), the forwarder sends an empty batch after
 * {@link #HEARTBEAT_MS} without a Deliver: one call a second at most, only while idle.
 *
 * <p>Every batch says whether the NameNode is active ({@code namenode_state}, and which
 * {@code active_term} of this hook it is). On an HA NameNode the namespace stream runs only
 * while it is active: the state is looked at every {@link #HA_STATE_CHECK_MS}, a change is sent
 * at once (a heartbeat), and each active term (and each new co-process during one) starts with
 * no namespace event until the co-process answers where to resume ({@code resume_term},
 * {@code resume_after_txid}: the position the active namenode-ext keeps in HDFS); the tailer
 * then reads the shared edit log from there. The local state file is then only the filter the
 * event journal captures by from a NameNode's first edit. Without HA nothing of this changes
 * the stream: the NameNode is always active and the local resume point is used as before.
 */
final class EventForwarder {
  private static final Logger LOG = LoggerFactory.getLogger(EventForwarder.class);
  private static final long RETRY_MS = 200;
  /**
   * Pace of the loop, and of resume-point saves, while nothing at all is subscribed: there is
   * nothing to send; a new subscription arrives with the next heartbeat (or a new co-process
   * generation), which the loop sends within this time.
   */
  static final long IDLE_MS = 1_000;
  /**
   * An empty batch is delivered after this long without a Deliver, so that a filter change in
   * the co-process reaches the hook (in the acknowledgement) while nothing is sent otherwise.
   */
  static final long HEARTBEAT_MS = 1_000;
  /** HA: how often the NameNode's state is looked at (one field read), and the heartbeat pace
   *  while a term waits for its resume point. */
  static final long HA_STATE_CHECK_MS = 200;
  /**
   * HA: a co-process that has not said where to resume this long after a term began (one that
   * does not know resume_term) gets the stream after the hook's own durable txid.
   */
  static final long RESUME_WAIT_MS = 15_000;

  private final EventHub hub;
  private final NamespaceTailer tailer;
  private final File stateFile;
  private final long persistIntervalMs;
  private final CoprocessLink supervisor;
  private final HookMetrics metrics;
  private final int batchMax;
  private final long lingerMs;
  private final long deliverTimeoutMs;

  private volatile boolean running;
  private Thread thread;
  private final Wakeup wakeup = new Wakeup();

  // Owned by the forwarder thread.
  private EventBatch inflight;
  private int inflightNamespace;
  private int inflightAudit;
  private long seq;
  private long lastFailureLog;
  private boolean healthy;
  private int generation = -1;
  private long durableTxid = -1;     // highest txid acknowledged durable (or loaded)
  private long resumeAfter = -1;     // set on the next batch after a new co-process: > -1
  private boolean resumePending;
  private long persistedTxid = Long.MIN_VALUE;
  private String persistedFilter = "";
  private long nextPersistAt;
  private final boolean auditForwarderConfigured;
  private boolean hintedAudit;
  private long lastDeliverMs;        // last acknowledged Deliver (heartbeats included)
  private final boolean ha;
  private final Supplier<NameNodeState> nnState;
  private NameNodeState state = NameNodeState.NAMENODE_STATE_UNSPECIFIED;
  private long activeTerm;           // active terms seen; the current one while active
  private boolean awaitingResume;    // HA: this term's namespace stream waits for resume_term
  private long awaitingSince;

  /** A forwarder of a NameNode without HA (always active). */
  EventForwarder(EventHub hub, NamespaceTailer tailer, CoprocessLink supervisor,
      HookMetrics metrics, HookConf hc) {
    this(hub, tailer, supervisor, metrics, hc, false, () -> NameNodeState.NAMENODE_STATE_ACTIVE);
  }

  /**
   * @param ha the NameNode is one of an HA nameservice
   * @param nnState its HA state now; must not block (NameNode.isActiveState, isStandbyState)
   */
  EventForwarder(EventHub hub, NamespaceTailer tailer, CoprocessLink supervisor,
      HookMetrics metrics, HookConf hc, boolean ha, Supplier<NameNodeState> nnState) {
    this.ha = ha;
    this.nnState = nnState;
    this.hub = hub;
    this.tailer = tailer;
    this.stateFile = hc.stateFile;
    this.persistIntervalMs = hc.statePersistMs;
    this.auditForwarderConfigured = hc.auditForwarderConfigured;
    this.supervisor = supervisor;
    this.metrics = metrics;
    this.batchMax = Math.max(1, hc.batchMax);
    this.lingerMs = Math.max(1, hc.batchLingerMs);
    this.deliverTimeoutMs = hc.deliverTimeoutMs;
  }

  /** Resumes from the persisted state, if any. */
  void resume(EventState st) {
    if (st == null) {
      return;
    }
    if (tailer != null) {
      tailer.setFilter(st.types, st.prefixes);
      persistedFilter = filterKey();
    }
    if (ha) {
      // The stream resumes where the active namenode-ext says (HDFS), not at this host's file.
      LOG.info("newtricks: HA NameNode: namespace events resume where namenode-ext keeps the "
          + "position in HDFS; {} gives only the filter", stateFile);
      return;
    }
    durableTxid = st.durableTxid;
    persistedTxid = st.durableTxid;
    if (tailer != null) {
      tailer.startAfter(st.durableTxid);
    }
    LOG.info("newtricks: namespace events resume after txid {} ({})", st.durableTxid, stateFile);
  }

  void start() {
    running = true;
    hub.setWakeup(wakeup);
    if (tailer != null) {
      tailer.setWakeup(wakeup);
    }
    thread = new Thread(this::loop, "newtricks-event-forwarder");
    thread.setDaemon(true);
    thread.start();
  }

  void stop() {
    running = false;
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(deliverTimeoutMs + 1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (t == null || !t.isAlive()) {
      persist(true);
    }
  }

  private void loop() {
    while (running) {
      long cycleStart = System.currentTimeMillis();
      boolean full = false;
      boolean delivered = false;
      try {
        boolean h = supervisor.isHealthy();
        if (h != healthy) {
          healthy = h;
          hub.setHealthy(h);
        }
        if (!h) {
          // No co-process: no tailer work, no batches; the audit logger queues nothing.
          sleep(RETRY_MS);
          continue;
        }
        int gen = supervisor.generation();
        if (gen != generation) {
          newCoprocess(gen);
        }
        checkState(cycleStart);
        if (tailer != null && namespaceOn()) {
          tailer.maybePoll(cycleStart);
        }
        hub.sweepHold(cycleStart);
        if (inflight == null) {
          build();
        }
        if (inflight == null) {
          heartbeat(cycleStart);
        }
        if (inflight == null && nothingSubscribed()) {
          persist(false);
          sleep((ha ? HA_STATE_CHECK_MS : IDLE_MS) - (System.currentTimeMillis() - cycleStart));
          continue;
        }
        if (inflight != null) {
          full = inflight.getEventsCount() >= batchMax;
          if (!deliver()) {
            sleep(RETRY_MS);
            continue;
          }
          delivered = true;
        }
        persist(false);
      } catch (InterruptedException e) {
        break;
      } catch (Throwable t) {
        LOG.warn("newtricks: event forwarder error: {}", t.toString());
      }
      if (!full) {
        try {
          if (inflight == null && !delivered) {
            waitForEvents();
          }
          sleep(lingerMs - (System.currentTimeMillis() - cycleStart));
        } catch (InterruptedException e) {
          break;
        }
      }
    }
  }

  /**
   * Nothing was queued this cycle: instead of looking again after the linger, waits until a
   * producer signals (then lingers from there, so a batch still gathers what arrives within
   * lingerMs), or until the next heartbeat, resume-point save, tailer check or sweep of the
   * audit repeat hold is due.
   */
  private void waitForEvents() throws InterruptedException {
    long now = System.currentTimeMillis();
    long until = Math.min(lastDeliverMs + heartbeatMs(), hub.holdSweepDue());
    if (ha) {
      until = Math.min(until, now + HA_STATE_CHECK_MS);
    }
    if (tailer != null && namespaceOn()) {
      until = Math.min(until, tailer.idleUntil(now));
      if (tailer.safeTxid() != persistedTxid) {
        until = Math.min(until, nextPersistAt);
      }
    }
    if (until - now <= lingerMs) {
      return; // due within the linger anyway
    }
    wakeup.await(until - now, this::arrived);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (arrived()) {
      sleep(lingerMs); // the linger starts with the first arrival
    }
  }

  /** An audit record or a journal chunk arrived. */
  private boolean arrived() {
    return hub.size() > 0 || (tailer != null && namespaceOn() && tailer.hasArrived());
  }

  /** Whether namespace events are read and sent now: HA only while active and resumed. */
  private boolean namespaceOn() {
    return !ha || (state == NameNodeState.NAMENODE_STATE_ACTIVE && !awaitingResume);
  }

  private long heartbeatMs() {
    return ha && awaitingResume ? HA_STATE_CHECK_MS : HEARTBEAT_MS;
  }

  private NameNodeState readState() {
    try {
      NameNodeState s = nnState.get();
      return s == null ? NameNodeState.NAMENODE_STATE_OTHER : s;
    } catch (Throwable t) {
      return NameNodeState.NAMENODE_STATE_OTHER;
    }
  }

  /**
   * Follows the NameNode's HA state: a change is told to the co-process at once (the next
   * heartbeat is due now); becoming active starts a term, which on an HA NameNode waits for the
   * co-process's resume point; leaving it drops what was read for the term (the next active
   * NameNode reads it again from the shared edit log).
   */
  private void checkState(long now) {
    NameNodeState s = readState();
    if (s != state) {
      boolean wasActive = state == NameNodeState.NAMENODE_STATE_ACTIVE;
      state = s;
      lastDeliverMs = 0;
      if (s == NameNodeState.NAMENODE_STATE_ACTIVE) {
        activeTerm++;
        if (ha) {
          awaitResume(now);
        }
      } else if (wasActive && ha) {
        awaitingResume = false;
        inflight = null;
        if (tailer != null) {
          tailer.resumeAt(-1);
        }
      }
      if (ha) {
        LOG.info("newtricks: NameNode is {} (active term {})", s, activeTerm);
      }
    }
    if (awaitingResume && now - awaitingSince > RESUME_WAIT_MS) {
      LOG.warn("newtricks: namenode-ext did not say where the namespace stream resumes in {} "
          + "ms (active term {}); resuming after txid {}, this NameNode's own position",
          RESUME_WAIT_MS, activeTerm, durableTxid);
      resumeAt(durableTxid, true);
    }
  }

  private void awaitResume(long now) {
    awaitingResume = true;
    awaitingSince = now;
    inflight = null;
    lastDeliverMs = 0;
  }

  /** Starts this term's namespace stream after txid (-1: from the present). */
  private void resumeAt(long txid, boolean ownPosition) {
    awaitingResume = false;
    inflight = null;
    if (tailer != null) {
      if (ownPosition) {
        tailer.restartAfter(txid);
      } else {
        tailer.resumeAt(txid);
      }
      resumePending = true;
      resumeAfter = txid;
    }
    durableTxid = txid;
    LOG.info("newtricks: active term {}: namespace events resume after txid {}", activeTerm, txid);
  }

  /**
   * A co-process generation we have not delivered to: apply its subscription and send it,
   * first, every selected namespace event after the last durable txid.
   */
  private void newCoprocess(int gen) {
    generation = gen;
    inflight = null; // its namespace events are retained by the tailer and sent again
    io.newtricks.proto.v1.ConfigureResponse r = supervisor.configureResponse();
    applyFilter(r == null ? EventFilter.getDefaultInstance() : r.getEvents());
    if (ha) {
      // The new co-process starts its term afresh and says where to resume (HDFS).
      if (state == NameNodeState.NAMENODE_STATE_ACTIVE) {
        awaitResume(System.currentTimeMillis());
      }
      return;
    }
    if (tailer != null) {
      tailer.restartAfter(durableTxid);
      resumePending = true;
      resumeAfter = durableTxid;
    }
  }

  private void applyFilter(EventFilter f) {
    nextPersistAt = 0; // a new filter is saved at once (a restarted NameNode captures by it)
    hub.subscribe(f.getAuditCommandsList(), f.getAuditMinRepeats(), f.getAuditRepeatWindowMs());
    if (f.getAuditCommandsCount() == 0 && auditForwarderConfigured && !hintedAudit) {
      hintedAudit = true;
      LOG.info("newtricks: nothing subscribes to audit events; without "
          + "io.newtricks.hadoop.AuditForwarder in dfs.namenode.audit.loggers the NameNode "
          + "would not build an audit record per call (when its audit log is off)");
    }
    if (tailer != null) {
      tailer.setFilter(f.getNamespaceTypesList(), f.getNamespacePathPrefixesList());
    }
    LOG.info("newtricks: co-process subscribes to audit {}{} and namespace {} under {}",
        f.getAuditCommandsList(), f.getAuditMinRepeats() >= 2 && f.getAuditRepeatWindowMs() > 0
            ? " (once audited " + f.getAuditMinRepeats() + " times within "
                + f.getAuditRepeatWindowMs() + " ms)" : "",
        f.getNamespaceTypesList(),
        f.getNamespacePathPrefixesList().isEmpty() ? "/" : f.getNamespacePathPrefixesList());
  }

  /** No audit command and no namespace type is subscribed. */
  private boolean nothingSubscribed() {
    return hub.activeCount() == 0 && (tailer == null || !tailer.wantsAny());
  }

  private String filterKey() {
    return tailer == null ? "" : tailer.types() + "|" + Arrays.toString(tailer.prefixes());
  }

  /** Saves the resume point if it moved (at most every persistIntervalMs unless forced). */
  private void persist(boolean force) {
    if (tailer == null || stateFile == null || !namespaceOn()) {
      return;
    }
    long now = System.currentTimeMillis();
    if (!force && now < nextPersistAt) {
      return;
    }
    // While nothing is subscribed the position only saves re-reading on a restart: it moves
    // with every edit, so it is saved (fsync) rarely then.
    nextPersistAt = now
        + (tailer.wantsAny() ? persistIntervalMs : Math.max(persistIntervalMs, IDLE_MS * 10));
    long safe = tailer.safeTxid();
    String fk = filterKey();
    if (safe < 0 || (safe == persistedTxid && fk.equals(persistedFilter))) {
      return;
    }
    try {
      new EventState(safe, tailer.types(), Arrays.asList(tailer.prefixes())).save(stateFile);
      persistedTxid = safe;
      persistedFilter = fk;
      metrics.persistedTxid.set(safe);
    } catch (Throwable t) {
      LOG.warn("newtricks: cannot save the event stream position to {}: {}", stateFile,
          t.toString());
    }
  }

  /** Builds the next batch from queued namespace events, then audit records. */
  private void build() {
    List<NamespaceEvent> ns = new ArrayList<>();
    if (tailer != null && namespaceOn()) {
      tailer.drainTo(ns, batchMax);
    }
    List<AuditRecord> audit = new ArrayList<>();
    hub.drainTo(audit, batchMax - ns.size());
    if (ns.isEmpty() && audit.isEmpty()) {
      return;
    }
    EventBatch.Builder b = EventBatch.newBuilder();
    for (NamespaceEvent e : ns) {
      b.addEvents(Event.newBuilder().setNamespace(e));
    }
    for (AuditRecord r : audit) {
      b.addEvents(Event.newBuilder().setAudit(toProto(r)));
    }
    if (resumePending && !ns.isEmpty()) {
      long after = resumeAfter >= 0 ? resumeAfter : ns.get(0).getTxid() - 1;
      b.setResumeTxid(after + 1);
      resumePending = false;
    }
    inflight = stamp(b.setSeq(++seq).setAuditDroppedTotal(hub.dropped())
        .setNamespaceGapsTotal(metrics.namespaceGaps.value())).build();
    inflightNamespace = ns.size();
    inflightAudit = audit.size();
  }

  /**
   * Delivers an empty batch if nothing was delivered for HEARTBEAT_MS: its acknowledgement
   * carries the co-process's filter if it changed (and its durable txid, which a subscriber
   * with a cursor of its own may have moved since). A failure is not retried: the next cycle
   * sends another.
   */
  private void heartbeat(long now) {
    // (9/10: the idle loop wakes once per HEARTBEAT_MS, give or take a millisecond)
    if (now - lastDeliverMs < heartbeatMs() * 9 / 10) {
      return;
    }
    ManagedChannel ch = supervisor.channel();
    if (ch == null) {
      return;
    }
    lastDeliverMs = now; // also after a failure: at most one attempt per HEARTBEAT_MS
    try {
      EventBatch empty = stamp(EventBatch.newBuilder().setSeq(seq)
          .setAuditDroppedTotal(hub.dropped())
          .setNamespaceGapsTotal(metrics.namespaceGaps.value())).build();
      DeliverAck ack = EventSinkGrpc.newBlockingStub(ch)
          .withDeadlineAfter(deliverTimeoutMs, TimeUnit.MILLISECONDS)
          .deliver(empty);
      metrics.heartbeats.incr();
      supervisor.answered();
      acknowledged(ack);
    } catch (RuntimeException e) {
      metrics.batchesFailed.incr();
      long t = System.currentTimeMillis();
      if (t - lastFailureLog > 10_000) {
        lastFailureLog = t;
        LOG.warn("newtricks: EventSink/Deliver heartbeat failed: {}", e.toString());
      }
    }
  }

  /** The NameNode's state, its active term and (HA, while streaming) the safe txid. */
  private EventBatch.Builder stamp(EventBatch.Builder b) {
    long safe = -1;
    if (ha && tailer != null && namespaceOn()) {
      safe = tailer.safeTxid();
    }
    return b.setNamenodeState(state).setActiveTerm(activeTerm).setSafeTxid(safe).setHa(ha);
  }

  private void acknowledged(DeliverAck ack) {
    if (ha && awaitingResume && ack.getResumeTerm() == activeTerm && activeTerm > 0) {
      resumeAt(ack.getResumeAfterTxid(), false);
    }
    if (tailer != null) {
      tailer.acknowledge(ack.getLastTxid(), ack.getDurableTxid());
    }
    durableTxid = Math.max(durableTxid, ack.getDurableTxid());
    if (ack.hasFilter()) {
      applyFilter(ack.getFilter());
    }
  }

  private boolean deliver() {
    ManagedChannel ch = supervisor.channel();
    if (ch == null) {
      return false;
    }
    long start = System.nanoTime();
    try {
      // Refresh the drop total on retries: the receiver wants the latest figure.
      EventBatch batch = inflight.getAuditDroppedTotal() == hub.dropped()
          ? inflight : inflight.toBuilder().setAuditDroppedTotal(hub.dropped()).build();
      DeliverAck ack = EventSinkGrpc.newBlockingStub(ch)
          .withDeadlineAfter(deliverTimeoutMs, TimeUnit.MILLISECONDS)
          .deliver(batch);
      metrics.deliverLatency.add((System.nanoTime() - start) / 1_000_000);
      metrics.batchesDelivered.incr();
      metrics.auditForwarded.incr(inflightAudit);
      metrics.namespaceForwarded.incr(inflightNamespace);
      lastDeliverMs = System.currentTimeMillis();
      supervisor.answered();
      inflight = null;
      acknowledged(ack);
      return true;
    } catch (RuntimeException e) {
      metrics.batchesFailed.incr();
      long now = System.currentTimeMillis();
      if (now - lastFailureLog > 10_000) {
        lastFailureLog = now;
        LOG.warn("newtricks: EventSink/Deliver of batch {} ({} events) failed, will retry: {}",
            inflight.getSeq(), inflight.getEventsCount(), e.toString());
      }
      return false;
    }
  }

  static AuditEvent toProto(AuditRecord r) {
    AuditEvent.Builder b = AuditEvent.newBuilder()
        .setCmd(nz(r.cmd))
        .setSrc(nz(r.src))
        .setDst(nz(r.dst))
        .setUser(nz(r.user))
        .setAllowed(r.allowed)
        .setTimeMs(r.timeMs)
        .setCallerContext(nz(r.callerContext));
    if (r.clientAddr != null) {
      b.setClientIp(r.clientAddr.getHostAddress());
    }
    return b.build();
  }

  private static void sleep(long ms) throws InterruptedException {
    if (ms > 0) {
      Thread.sleep(ms);
    }
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
