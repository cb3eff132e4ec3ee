// Package mirror copies checkpoints from the training cluster (dc-a, where namenode-ext runs)
// to the evaluation cluster (dc-b) while they are being written, so evaluation reads them
// locally the moment they are complete ("trick 2").
//
// Rules (Config, keys newtricks.mirror.*) say which dc-a directories are checkpoints
// ("/ckpt/{job}/step_{step}"), how completion shows (a marker file, a rename from a temporary
// name, or an explicit signal), where they go on dc-b, and how many to keep there.
//
// The Engine is fed by namespace events (inotify, through the event sink). Each CLOSE of a file
// inside a checkpoint queues that file; Concurrency workers stream files from dc-a to a staging
// directory on dc-b with colinmarc/hdfs on both sides, never holding a file in memory, urgent
// checkpoints first, bulk work paused while an urgent one has files left. Every connection acts
// as the checkpoint's owner through Hadoop's proxy-user rules (real user Config.ProxyUser), on
// both clusters, so HDFS checks the owner's permissions and quotas; the mirror is never a
// superuser on a user's behalf. The HDFS MD5MD5CRC32C checksum of the bytes streamed is
// compared with dc-a's own checksum of the file, and the file's id, length and mtime must not
// change during the copy (else the checkpoint FAILS: never a commit of mixed data). A copied
// file gets its source's permission, group and mtime; verified files are journaled (in dc-a's
// HDFS, see journal) before they count. When the checkpoint is complete on dc-a, its directory
// is listed (files whose events were missed are queued, vanished ones fail it); once every
// file's streamed bytes are checked against dc-a, a manifest is written into the staging
// directory and the directories get their source permissions and times, while dc-b completes
// the last files and the journal records them (the commit overlaps those round trips); when
// every file is verified and journaled (and the manifest rewritten if a record changed
// meanwhile), the staging directory is renamed to the destination in one NameNode operation: a
// reader polling dc-b sees the whole checkpoint or nothing. CleanupDelay later (evaluators read
// the new checkpoint first), retention deletes a job's older mirrors beyond the rule's Retain
// and the committed checkpoint's journal segments are removed.
//
// After a crash (kill -9 of namenode-ext, NameNode restart) Run reloads the journal: verified
// files are not copied again, and the event stream resumes where the journal ends: the engine
// marks on the event sink's Cursor only the txid up to which every event's effect is journaled
// (durableTxid), the NameNode hook resumes after it, and replays of older events are skipped.
// Only if the stream cannot resume there (the hook lost its position, skipped purged edits, or
// events were dropped from a full queue) are the active checkpoints listed again. A commit that
// happened just before the crash is recognised by its manifest. dc-b being unreachable, or out
// of space or quota, only delays: transfers and commits are retried with backoff.
//
// Memory is bounded by configuration: at most MaxCheckpoints checkpoints are tracked (events of
// further ones are dropped and counted), each with at most MaxFiles file records (more fails
// it, naming the key), Concurrency transfers each hold one 64 KiB buffer (and a range its chunk
// CRCs, 4 bytes per 512), and the event queue holds 65536 events. What a caller can make the
// mirror hold is bounded too (guard.go): Urgent and Complete need write access to the
// checkpoint's directory, urgent marks for checkpoints not seen yet are bounded per user and in
// total and expire, an owner has at most MaxCheckpointsPerUser checkpoints in flight, Wait
// streams are bounded, a checkpoint owned by the superuser is refused unless AllowSuperuser,
// and retention deletes only the committing owner's mirrors that still hold the manifest the
// mirror wrote (only a manifest's head, 64 KiB at most, is ever read back).
//
// Limits (not built): files are written as the checkpoint directory's owner (a file owned by
// another user inside it keeps the directory owner's name on dc-b); retention only sees the
// newest keep-finished checkpoints.
package mirror
