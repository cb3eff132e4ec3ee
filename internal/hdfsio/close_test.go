package hdfsio_test

import (
	"bytes"
	"context"
	"os/user"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/clustertest"
	"github.com/newtricks/newtricks/internal/hdfsio"
)

// TestCloseTwoBlocksReportedLate closes two-block files on a DataNode that sends its
// incremental block reports at most every 3 s, so that the first `complete` comes before
// the NameNode knows of a replica of the first block: the NameNode answers false without
// committing the last block. colinmarc/hdfs's own Close, called again as it documents, then
// asks with no last block and the file never completes (the control); CloseFile sends the
// last block again, as the Java client does, and the file completes with its bytes. (With
// CloseFile retrying as colinmarc/hdfs does, this test failed here: "replication in
// progress" after 30 s.)
func TestCloseTwoBlocksReportedLate(t *testing.T) {
	c := clustertest.Start(t, cluster.Config{
		DataNodes: 1,
		HDFSSite:  map[string]string{"dfs.blocksize": "1048576", "dfs.replication": "1"},
		DataNodeSite: func(int) map[string]string {
			return map[string]string{"dfs.blockreport.incremental.intervalMsec": "3000"}
		},
	})
	me, err := user.Current() // the daemons' user: the superuser
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.Client(me.Username)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.MkdirAll("/t", 0o777); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), (1<<20+300000)/16)
	create := func(name string) *hdfs.FileWriter {
		t.Helper()
		w, err := cl.CreateFile(name, 1, 1<<20, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		return w
	}

	// The control: colinmarc/hdfs's Close, retried for 10 s (three report intervals).
	w := create("/t/control")
	err = w.Close()
	if !hdfs.IsErrReplicating(err) {
		t.Fatalf("first Close = %v, want replication in progress: the DataNode reported the first block before the first complete, so this test does not exercise a late report", err)
	}
	for end := time.Now().Add(10 * time.Second); err != nil && hdfs.IsErrReplicating(err) && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		err = w.Close()
	}
	switch {
	case err == nil:
		// The report of the first block came between the writes and the first complete
		// (the DataNode's timer is not ours): the NameNode then committed the last block.
		t.Logf("control: colinmarc/hdfs's Close retries completed the file (the first block was reported in time for the first complete)")
	case hdfs.IsErrReplicating(err):
		t.Logf("control: colinmarc/hdfs's Close retries did not complete the file in 10 s (the bug CloseFile works around)")
	default:
		t.Fatalf("control Close: %v", err)
	}

	// CloseFile: the first complete answers false the same way, a retry completes the file.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := hdfsio.CloseFile(ctx, create("/t/fixed")); err != nil {
		t.Fatalf("CloseFile of a two-block file reported late: %v", err)
	}
	t.Logf("CloseFile completed the two-block file in %v", time.Since(start).Round(time.Millisecond))
	got, err := cl.ReadFile("/t/fixed")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want the %d written", len(got), len(data))
	}
	fi, err := cl.Stat("/t/fixed")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", fi.Size(), len(data))
	}
}
