// Package hdfsio holds the few HDFS helpers that colinmarc/hdfs leaves to its callers:
// a Close that retries while the NameNode still waits for the last block's replicas (as the
// Java client does), a whole-file write on top of it, and a directory upload. The dataset
// builder, the demo, the harness and the benchmarks share them.
package hdfsio

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// WriteFile creates name with data through cl and closes it, retrying Close while the
// NameNode answers "replication in progress" (the last block is committed but no DataNode
// has reported it yet, common on a loaded machine). colinmarc/hdfs leaves that retry to the
// caller; the Java client retries with backoff the same way.
func WriteFile(ctx context.Context, cl *hdfs.Client, name string, data []byte) error {
	w, err := cl.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return CloseFile(ctx, w)
}

// CloseFile closes w, retrying with backoff while hdfs.IsErrReplicating, until ctx ends.
// Each retry sends the file's last block again, as the Java client does (complete.go says
// why colinmarc/hdfs's own second Close cannot complete a multi-block file).
func CloseFile(ctx context.Context, w *hdfs.FileWriter) error {
	pending := lastBlock(w)
	delay := 50 * time.Millisecond
	for try := 0; ; try++ {
		var err error
		if try == 0 || pending == nil {
			err = w.Close()
		} else {
			err = pending.complete()
		}
		if err == nil || !hdfs.IsErrReplicating(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// UploadDir copies the local directory tree local into HDFS under remote (directories made
// 0755, each file written with WriteFile).
func UploadDir(ctx context.Context, cl *hdfs.Client, local, remote string) error {
	return filepath.Walk(local, func(p string, st os.FileInfo, err error) error {
		if err != nil || st.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		dst := path.Join(remote, filepath.ToSlash(rel))
		if err := cl.MkdirAll(path.Dir(dst), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return WriteFile(ctx, cl, dst, data)
	})
}

// Replication returns the replication factor the NameNode records for name.
func Replication(c *hdfs.Client, name string) (int, error) {
	fi, err := c.Stat(name)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(interface{ GetBlockReplication() uint32 })
	if !ok {
		return 0, fmt.Errorf("stat %s: no replication in %T", name, fi.Sys())
	}
	return int(st.GetBlockReplication()), nil
}
