// Package hotspot makes files that many readers are about to load at once ("the
// initialization I/O storm" of a restarting training job) ready in time, by raising their HDFS
// replication factor before the storm and putting it back afterwards.
//
// A trainer sends a hint (Hints service in proto/newtricks/v1/hotspot.proto, client in
// hintclient, CLI "newtricks hint"): paths, when they turn hot, for how long, how many readers
// and who asks. The Manager plans a target factor per file, records the hint durably, raises
// the factors through the NameNode host service, boosts the NameNode's re-replication limits
// while replicas are being made, tracks readiness from block locations and restores every file
// at the end of the window (or on Done). In reactive mode (off by default) K distinct clients
// opening one file within W seconds make an implicit hint.
//
// # Planner
//
// With N live in-service DataNodes, x̄ their mean xceiver count, P the pending reconstruction
// plus low-redundancy blocks, R the expected readers and r the file's current factor:
//
//	load    L = clamp(max(x̄ / busyXceivers, P / (busyPendingPerNode · N)), 0, 1)
//	cap     C = round(maxQuiet − L · (maxQuiet − maxBusy))           // 50 quiet .. 20 busy
//	demand  D = ceil(R / readersPerReplica)                         // or the explicit factor
//	target  T = min(max(minFactor, D), C, replicationMax, N)
//	file    t = T if T > r, else r (never lowered)
//
// so the factor grows with the readers and shrinks with the load, and never exceeds the live
// DataNodes (a replica per node is the most HDFS places). Then, for every ancestor directory
// with a space quota (GetContentSummary, as the NameNode identity), files are taken in order
// and each file's extra bytes length · (t − r) must fit the remaining headroom of all its
// quota'd ancestors; a file gets the largest t that fits, or is skipped (QUOTA). Only files the
// user may change are planned: listing and stat run as the user, and CheckAccess(WRITE) as the
// user on every file; the factor itself is then set as the NameNode identity. Anything left out
// or lowered is in the plan with its reason (a partial plan). The ready-time estimate is
// scheduleDelay + max(bytes to copy / (N · copyBandwidth), biggest block / copyBandwidth): the
// NameNode copies each block as one pipeline to all its new targets.
//
// # Execution
//
// While any hint is PREPARING, dfs.namenode.replication.max-streams-hard-limit,
// dfs.namenode.replication.max-streams and
// dfs.namenode.replication.work.multiplier.per.iteration are raised with
// NameNode.reconfigureProperty (all three are in NameNode's reconfigurable properties in Hadoop
// 3.4, handled by reconfReplicationParameters) and put back, in reverse order, to the values
// Reconfigure returned. A hint is READY when every block of every file has min(target, live
// DataNodes) locations.
//
// # Durability
//
// Everything needed to restore is in HDFS xattrs, written as the NameNode identity (the
// superuser, so the user. namespace is writable whatever the file's permissions):
//
//   - "<prefix>.hint.<id>" on Config.StateDir (default "/"): the hint record, gzip'd JSON with
//     the user, deadline, and every file's path, original and target factor. It is written
//     before the first factor changes and removed only after the last file is restored, and
//     rewritten by Extend and Done. Its size is bounded by the NameNode's xattr size limit, so
//     files that do not fit are skipped (STATE_BUDGET) rather than applied untracked; its count
//     by max-active-hints (HDFS allows 32 xattrs per inode by default).
//   - "<prefix>" on each raised file: its original factor and the first hint, for admins
//     (hdfs dfs -getfattr) and as a second copy.
//   - "<prefix>.limits" on StateDir while limits are boosted: the keys and their old values.
//
// On start, Run waits until the NameNode is active and out of safe mode, puts boosted limits
// back, reads every hint record from StateDir and adopts it: due hints are restored at once,
// the others are tracked until their deadline. The restore of a file is idempotent: it sets
// the highest target of the other hints still holding it, or the original factor, and only if
// the factor is still the one this manager set (a factor changed by someone else meanwhile is
// left alone). Nothing depends on namenode-ext's local disk, so a crash of namenode-ext, of
// the whole NameNode host, or a NameNode restart all end the same way. HDFS removes the excess
// replicas itself after the factor goes down.
package hotspot
