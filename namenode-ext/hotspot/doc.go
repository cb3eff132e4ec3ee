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
// plus low-redundancy blocks, E the eligible DataNodes (below busy load, with room) and F their
// free space, S the hint's bytes and f the share of them on the busiest current holder, I the
// bytes other hints still copy, R the expected readers and r the file's current factor:
//
//	load    L  = clamp(max(x̄ / busyXceivers, P / (busyPendingPerNode · N)), 0, 1)
//	cap     C  = round(maxQuiet − L · (maxQuiet − maxBusy))          // 512 quiet .. 20 busy
//	demand  D  = ceil(R / readersPerReplica)                        // or the explicit factor
//	spread  Sp = ceil(f · E)      // the busiest holder serves no more than its share
//	space   B  = min r + floor((maxSpaceFraction · F − I) / S)
//	target  T  = min(max(minFactor, min(D, Sp)), C, B, replicationMax, E)
//	file    t  = T if T > r, else r (never lowered)
//
// so the factor grows with the readers up to the point where the load is spread over every
// DataNode, shrinks with the load and the free space, and never exceeds the eligible DataNodes
// (a replica per node is the most HDFS places); docs/hotspot.md gives the reasons, bench/sim
// the check at 1,000 DataNodes. Then, for every ancestor directory
// with a space quota (GetQuotaUsage: O(depth) per file, from the NameNode's inode tree), files
// are taken in order and each file's extra bytes length · (t − r) must fit the remaining
// headroom of all its quota'd ancestors; a file gets the largest t that fits, or is skipped
// (QUOTA). Only files the user may change are planned: listing and stat run as the user, and
// CheckAccess(WRITE) as the user on every file (batched); the factor itself is then set as the
// NameNode identity. Anything left out or lowered is in the plan with its reason (a partial
// plan).
//
// # Execution
//
// Files are tracked by inode id (/.reserved/.inodes/<id>), so a rename during the window does
// not lose them. Every write is a conditional, batched SetReplications change (apply.go): it
// applies only if the factor is the one this manager set (or found when planning), so a factor
// someone else set is never overwritten; such a file is let go by every hint holding it. The
// writes are serialised one batch at a time (writeMu), so a 10,000-file hint does not stall
// the restores and readiness rounds of others. Readiness comes from InspectFiles, which counts
// live replicas per block from the first block that was short at the last look. The NameNode's
// re-replication limits (max-streams-hard-limit, max-streams, work.multiplier.per.iteration)
// are raised through NameNode.reconfigureProperty while some hint has copying to do, and put
// back when none has, or after BoostMaxDuration with the reason in the hints' notes.
//
// # Durability
//
// Everything needed to restore is in HDFS xattrs, written as the NameNode identity:
//
//   - "<prefix>.hint.<id>" on Config.StateDir: the hint record (state.go): header and the
//     files' inode ids with this hint's targets and their original factors, written before the first factor changes and
//     removed after every file was let go. Its size is bounded by the NameNode's xattr size
//     limit (files that do not fit are skipped, STATE_BUDGET); its count by max-active-hints.
//   - "<prefix>" on each held file: its marker, the source of truth for that file: original
//     factor, factor set, the target of each holding hint, and while a change is in flight the
//     factor before it. Recovery reads it (recovery.go): factor = set: as left; factor = before:
//     the change did not happen and is redone; anything else: changed by someone else, let go.
//     The marker is on the file, writable by whoever may write the file, so recovery believes
//     it only where it agrees with the records (only the service writes StateDir) and sets
//     factors only from the records; a marker that disagrees, or a change the NameNode refuses,
//     skips that file alone (counted, reported) and recovery goes on for the others.
//   - "<prefix>.limits" on StateDir while limits are boosted: the keys and their old values.
//
// Nothing depends on namenode-ext's local disk, so a crash of namenode-ext, of the whole
// NameNode host, or a NameNode restart all end the same way. Undecodable records and markers
// are reported (List for the superuser, the state_problems metric, the log) and left in place.
// See docs/hotspot.md.
package hotspot
