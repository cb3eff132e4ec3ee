package mirror

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// journal keeps the mirror's durable state in dc-a's HDFS, under Config.JournalDir, written
// as dc-a's superuser (the NameNode's own identity: this is the extension's bookkeeping):
//
//	<dir>/<id>/meta.json      the checkpoint: rule, job, step, owner, paths, state (replaced
//	                          atomically by write-then-rename)
//	<dir>/<id>/v-<n>.jsonl    verified files, one JSON record a line; a file counts as
//	                          verified (and is never copied again) only once it is here
//	<dir>/cursor.json         the event txid up to which every event's effect is in the
//	                          journal (with an event-sink Cursor; see Engine.durableTxid)
//
// Segments are dropped when a checkpoint commits (its manifest on dc-b lists the files).
type journal struct {
	e   *Engine
	dir string

	mu      sync.Mutex // serialises writes
	client  *hdfs.Client
	pending map[*checkpoint][]*file
	seq     int64
}

type metaRecord struct {
	V           int    `json:"v"`
	ID          string `json:"id"`
	Rule        string `json:"rule"`
	Job         string `json:"job"`
	Step        int64  `json:"step"`
	StepStr     string `json:"step_str"`
	Owner       string `json:"owner,omitempty"`
	Group       string `json:"group,omitempty"`
	SrcDir      string `json:"src"`
	FinalSrc    string `json:"final_src,omitempty"`
	Dest        string `json:"dest"`
	Staging     string `json:"staging"`
	State       State  `json:"state"`
	Complete    bool   `json:"complete,omitempty"`
	Urgent      bool   `json:"urgent,omitempty"`
	Err         string `json:"err,omitempty"`
	FirstSeen   int64  `json:"first_seen"`
	CompletedAt int64  `json:"completed,omitempty"`
	CommittedAt int64  `json:"committed,omitempty"`
	Files       int    `json:"files,omitempty"`
	Bytes       int64  `json:"bytes,omitempty"`
	MaxTxid     int64  `json:"max_txid,omitempty"` // highest event txid applied
}

func metaOf(c *checkpoint) metaRecord {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMilli()
	}
	return metaRecord{V: 1, ID: c.id, Rule: c.key.Rule, Job: c.key.Job, Step: c.key.Step, StepStr: c.stepStr,
		Owner: c.owner, Group: c.group, SrcDir: c.srcDir, FinalSrc: c.finalSrc, Dest: c.dest, Staging: c.staging,
		State: c.state, Complete: c.complete, Urgent: c.urgent, Err: c.err, FirstSeen: ms(c.firstSeen),
		CompletedAt: ms(c.completedAt), CommittedAt: ms(c.committedAt), Files: len(c.files), Bytes: c.bytesTotal,
		MaxTxid: c.maxTxid}
}

func (j *journal) ckptDir(id string) string { return path.Join(j.dir, id) }

// saveMeta writes the checkpoint's meta record; failures are logged and retried by the next
// save (the record only moves forward).
func (j *journal) saveMeta(c *checkpoint) {
	// The record is taken under j.mu, so saves land in the order of the changes they hold.
	j.mu.Lock()
	defer j.mu.Unlock()
	j.e.mu.Lock()
	m, ver := metaOf(c), c.metaVer
	c.metaTry = time.Now()
	j.e.mu.Unlock()
	if j.client == nil {
		return
	}
	b, _ := json.Marshal(m)
	dir := j.ckptDir(m.ID)
	if err := j.writeAtomic(dir, "meta.json", b); err != nil {
		j.e.log.Warn("journal: saving checkpoint", "id", m.ID, "error", err)
		return
	}
	j.e.mu.Lock()
	c.metaSaved, c.savedState = true, m.State
	if c.metaVer == ver {
		c.metaDirty = 0
	}
	j.e.mu.Unlock()
}

type cursorRecord struct {
	V    int   `json:"v"`
	Txid int64 `json:"txid"`
}

// saveCursor records that every event up to txid is durable in the journal.
func (j *journal) saveCursor(txid int64) error {
	b, _ := json.Marshal(cursorRecord{V: 1, Txid: txid})
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.client == nil {
		return errors.New("journal not open")
	}
	return j.writeAtomic(j.dir, "cursor.json", b)
}

// loadCursor returns the saved event txid, -1 if there is none.
func (j *journal) loadCursor() (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := j.readFile(j.dir + "/cursor.json")
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	var r cursorRecord
	if err := json.Unmarshal(b, &r); err != nil || r.V != 1 {
		j.e.log.Warn("journal: unreadable event cursor; the active checkpoints are listed again", "error", err)
		return -1, nil
	}
	return r.Txid, nil
}

// durableTxid is the event txid up to which every event's effect is in the journal: below
// the lowest event that queued a file not yet journaled as verified (or whose checkpoint's
// meta record was never saved), or changed a meta record not saved since. Checkpoints whose
// final state is saved hold nothing back. With nothing outstanding it is the last event
// handled.
func (e *Engine) durableTxid() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	low := int64(0)
	consider := func(t int64) {
		if t > 0 && (low == 0 || t < low) {
			low = t
		}
	}
	for _, c := range e.ckpts {
		if c.savedState.terminal() {
			continue
		}
		consider(c.metaDirty)
		if c.state.terminal() {
			consider(c.maxTxid) // its final record is not saved yet
		}
		for _, f := range c.order {
			if f.txid > 0 && !(f.state == fileVerified && c.metaSaved) {
				consider(f.txid)
			}
		}
	}
	if low > 0 {
		return min(low-1, e.handledTxid)
	}
	return e.handledTxid
}

// advanceCursor saves the durable txid in the journal (at most every second), then marks it
// on the event sink's cursor, so the hook never resumes beyond what the journal holds; meta
// records whose save failed are saved again.
func (e *Engine) advanceCursor() {
	if e.cursor == nil {
		return
	}
	now := time.Now()
	e.mu.Lock()
	var again []*checkpoint
	for _, c := range e.ckpts {
		if (c.metaDirty > 0 || c.state.terminal() && c.savedState != c.state) && now.Sub(c.metaTry) > 2*time.Second {
			c.metaTry = now
			again = append(again, c)
		}
	}
	due := now.Sub(e.cursorAt) >= time.Second
	e.mu.Unlock()
	for _, c := range again {
		go e.journal.saveMeta(c)
	}
	if !due {
		return
	}
	d := e.durableTxid()
	e.mu.Lock()
	saved := e.savedTxid
	e.mu.Unlock()
	if d <= saved {
		return
	}
	if err := e.journal.saveCursor(d); err != nil {
		e.log.Warn("journal: saving the event cursor", "txid", d, "error", err)
		return
	}
	e.mu.Lock()
	e.savedTxid, e.cursorAt = d, now
	e.mu.Unlock()
	e.cursor.Mark(d)
}

func (j *journal) writeAtomic(dir, name string, b []byte) error {
	if err := j.client.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	j.seq++
	tmp := fmt.Sprintf("%s/.%s.%d.tmp", dir, name, j.seq)
	if err := j.writeFile(tmp, b); err != nil {
		return err
	}
	return j.client.Rename(tmp, dir+"/"+name)
}

func (j *journal) writeFile(p string, b []byte) error {
	w, err := j.client.Create(p)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return closeWriter(w)
}

// add queues a copied file for the next flush (called with e.mu held).
func (j *journal) add(c *checkpoint, f *file) {
	if j.pending == nil {
		j.pending = map[*checkpoint][]*file{}
	}
	j.pending[c] = append(j.pending[c], f)
}

// journalLoop flushes copied files into segments every JournalFlush.
func (e *Engine) journalLoop(ctx context.Context) {
	t := time.NewTicker(max(e.cfg.JournalFlush, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.journal.flush()
			e.advanceCursor()
		case <-e.flushNow:
			e.journal.flush()
		}
	}
}

func (j *journal) flush() {
	e := j.e
	e.mu.Lock()
	batch := j.pending
	j.pending = nil
	type seg struct {
		c     *checkpoint
		files []*file
		data  []byte
	}
	var segs []seg
	for c, files := range batch {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, f := range files {
			enc.Encode(f.rec)
		}
		segs = append(segs, seg{c, files, buf.Bytes()})
	}
	e.mu.Unlock()
	for _, s := range segs {
		j.mu.Lock()
		var err error
		if j.client == nil {
			err = errors.New("journal not open")
		} else {
			j.seq++
			err = j.client.MkdirAll(j.ckptDir(s.c.id), 0o700)
			if err == nil {
				err = j.writeFile(fmt.Sprintf("%s/v-%d-%d.jsonl", j.ckptDir(s.c.id), time.Now().UnixNano(), j.seq), s.data)
			}
		}
		j.mu.Unlock()
		e.mu.Lock()
		if err != nil {
			// Try again with the next flush.
			e.log.Warn("journal: writing verified files", "checkpoint", s.c.key, "error", err)
			if j.pending == nil {
				j.pending = map[*checkpoint][]*file{}
			}
			j.pending[s.c] = append(j.pending[s.c], s.files...)
			e.mu.Unlock()
			continue
		}
		for _, f := range s.files {
			if f.state != fileCopied {
				continue
			}
			f.state = fileVerified
			s.c.filesDone++
			s.c.bytesDone += f.size
			e.bytesAll.Add(f.size)
			e.filesAll.Add(1)
		}
		e.changedLocked(s.c)
		if s.c.listed && s.c.filesDone == len(s.c.files) {
			s.c.verifiedAt = e.now()
			signal(e.kick) // ready to commit
		}
		e.mu.Unlock()
	}
}

// dropSegments removes a committed checkpoint's segments (the manifest holds the list).
func (j *journal) dropSegments(c *checkpoint) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.client == nil {
		return
	}
	dir := j.ckptDir(c.id)
	infos, err := j.client.ReadDir(dir)
	if err != nil {
		return
	}
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), "v-") {
			j.client.Remove(dir + "/" + fi.Name())
		}
	}
}

// remove deletes a checkpoint's journal directory.
func (j *journal) remove(id string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.client != nil {
		if err := j.client.RemoveAll(j.ckptDir(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			j.e.log.Warn("journal: removing a finished checkpoint", "id", id, "error", err)
		}
	}
}

// load reads every journaled checkpoint with its verified files.
func (j *journal) load() ([]metaRecord, map[string][]fileRecord, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.client.MkdirAll(j.dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal dir %s: %w", j.dir, err)
	}
	dirs, err := j.client.ReadDir(j.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("journal dir %s: %w", j.dir, err)
	}
	var metas []metaRecord
	files := map[string][]fileRecord{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := j.ckptDir(d.Name())
		b, err := j.readFile(dir + "/meta.json")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // a crash before the first meta write: nothing was copied under it
			}
			return nil, nil, err
		}
		var m metaRecord
		if err := json.Unmarshal(b, &m); err != nil || m.V != 1 {
			j.e.log.Warn("journal: skipping unreadable record", "dir", dir, "error", err)
			continue
		}
		metas = append(metas, m)
		if m.State.terminal() {
			continue
		}
		infos, err := j.client.ReadDir(dir)
		if err != nil {
			return nil, nil, err
		}
		for _, fi := range infos {
			if !strings.HasPrefix(fi.Name(), "v-") {
				continue
			}
			b, err := j.readFile(dir + "/" + fi.Name())
			if err != nil {
				return nil, nil, err
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var r fileRecord
				if json.Unmarshal(sc.Bytes(), &r) == nil && r.Path != "" {
					files[m.ID] = append(files[m.ID], r)
				}
			}
		}
	}
	sort.Slice(metas, func(a, b int) bool { return metas[a].FirstSeen < metas[b].FirstSeen })
	return metas, files, nil
}

func (j *journal) readFile(p string) ([]byte, error) {
	r, err := j.client.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 256<<20))
}
