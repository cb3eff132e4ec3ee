package main

import "github.com/colinmarc/hdfs/v2"

// How much of a checkpoint is on dc-b at the moment it completes on dc-a, for the floor.
//
// The floor takes it from the WAN relay's counter of bytes delivered to dc-b's side (counted as
// each chunk is written to dc-b, after the link's delay), scaled by the run's own ratio of
// checkpoint bytes to link bytes (the protocol's share, measured over the whole run): the
// bench's own measurement, not the mirror's. It is checked against HDFS on dc-b: the growth of
// dc-b's ContentSummary of "/" (the NameNode's length of every file, which leaves out blocks
// still being written, so it is a lower bound of what arrived) must not exceed it by more than
// rounding. The mirror's own Mirror.Status (BytesDone) is printed beside both and never used.
//
// dc-b's DataNode BytesWritten counter (JMX) is not used: Hadoop's metrics2 serves JMX from a
// cache refreshed once per metrics period (10 s by default), so at completion it can be seconds
// old (a -quick trial read 37.8 MiB unsent for a checkpoint that was on dc-b, a floor above (c)).

// dcbStored is the NameNode of dc-b's total length of all files (a ContentSummary of "/").
func dcbStored(cl *hdfs.Client) (int64, error) {
	cs, err := cl.GetContentSummary("/")
	if err != nil {
		return 0, err
	}
	return cs.Size(), nil
}
