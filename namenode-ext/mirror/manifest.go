package mirror

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/colinmarc/hdfs/v2"
)

// Manifest is written into every committed checkpoint directory on dc-b (Config.Manifest).
type Manifest struct {
	V           int          `json:"v"`
	ID          string       `json:"id"`
	Rule        string       `json:"rule"`
	Job         string       `json:"job"`
	Step        int64        `json:"step"`
	Source      string       `json:"source"`
	Owner       string       `json:"owner"`
	CompletedAt int64        `json:"completed_ms"`
	Files       []fileRecord `json:"files"`
}

// preparedManifest is the manifest file created on dc-b (its block allocated, and its head,
// everything before the file records, sent to the DataNode, which opens the write pipeline)
// as soon as the complete checkpoint's files are all known, while its last files are still
// copied: the commit then only streams the records and closes it, and since the top
// directory's entry exists already, sets the top directory's times at the same time.
type preparedManifest struct {
	ready  chan struct{} // closed once w, dc (or err) are set
	dc     *hdfs.Client  // the client w belongs to, held until the commit
	w      *hdfs.FileWriter
	prefix []byte // written already
	err    error
}

// manifestHeadLocked is the checkpoint's manifest without its file records.
func (e *Engine) manifestHeadLocked(c *checkpoint) Manifest {
	return Manifest{V: 1, ID: c.id, Rule: c.key.Rule, Job: c.key.Job, Step: c.key.Step, Source: c.srcDir,
		Owner: c.owner, CompletedAt: c.completedAt.UnixMilli()}
}

// manifestPrefix is the start of the manifest's JSON up to its file records (Files is the last
// field): the same bytes however many records follow.
func manifestPrefix(m Manifest) []byte {
	m.Files = nil
	b, _ := json.MarshalIndent(m, "", " ")
	key := []byte(`"files": `)
	return b[:bytes.Index(b, key)+len(key)]
}

func (e *Engine) prepareManifest(c *checkpoint, pm *preparedManifest) {
	defer close(pm.ready)
	e.mu.Lock()
	owner, staging := c.owner, c.staging
	prefix := manifestPrefix(e.manifestHeadLocked(c))
	e.mu.Unlock()
	dc, err := e.dst.get(owner)
	if err != nil {
		pm.err = err
		return
	}
	if err := e.ensureDir(c, dc, "."); err != nil {
		pm.err = err
		e.dst.put(owner, dc, !isConnErr(err))
		return
	}
	w, err := e.createManifest(dc, staging+"/"+e.cfg.Manifest)
	if err == nil {
		// Allocates the block (addBlock), connects to the DataNode and sends the head now;
		// colinmarc/hdfs keeps the pipeline alive with heartbeats until the commit.
		if _, err = w.Write(prefix); err == nil {
			err = w.Flush()
		}
		if err != nil {
			w.Close()
		}
	}
	if err != nil {
		pm.err = err
		e.dst.put(owner, dc, !isConnErr(err))
		return
	}
	pm.dc, pm.w, pm.prefix = dc, w, prefix
}

// takeManifest returns the prepared manifest of this attempt, if it is usable.
func (e *Engine) takeManifest(c *checkpoint) *preparedManifest {
	e.mu.Lock()
	pm := c.manifest
	c.manifest = nil
	e.mu.Unlock()
	if pm == nil {
		return nil
	}
	<-pm.ready
	if pm.err != nil {
		e.log.Debug("manifest not prepared", "checkpoint", c.key, "error", pm.err)
		return nil
	}
	return pm
}

// writeManifest writes the manifest into the staging directory (replacing one from an earlier
// attempt).
func (e *Engine) writeManifest(dc *hdfs.Client, mp string, b []byte, again bool) error {
	if again {
		if err := dc.Remove(mp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove old manifest on dc-b: %w", err)
		}
	}
	w, err := e.createManifest(dc, mp)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return fmt.Errorf("write manifest on dc-b: %w", err)
	}
	if err := closeWriter(w); err != nil {
		return fmt.Errorf("close manifest on dc-b: %w", err)
	}
	return nil
}

// createManifest creates the manifest file (replacing one left by an earlier attempt).
func (e *Engine) createManifest(dc *hdfs.Client, mp string) (*hdfs.FileWriter, error) {
	def, err := e.destDefaults(dc)
	if err != nil {
		return nil, fmt.Errorf("server defaults of dc-b: %w", err)
	}
	w, err := dc.CreateFile(mp, def.Replication, def.BlockSize, 0o444)
	if errors.Is(err, os.ErrExist) {
		if rerr := dc.Remove(mp); rerr == nil {
			w, err = dc.CreateFile(mp, def.Replication, def.BlockSize, 0o444)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create manifest on dc-b: %w", err)
	}
	return w, nil
}

// maxManifestHead bounds what is read of a manifest on dc-b (someone else may control what is
// there): its head, everything before the file records, is a few hundred bytes.
const maxManifestHead = 64 << 10

// readManifestHead reads a committed checkpoint's manifest head on dc-b (id, rule, job, step,
// owner: the destination check and retention's ownership check), reading at most
// maxManifestHead bytes and stopping at the file records.
func readManifestHead(dc *hdfs.Client, p string) (*Manifest, error) {
	r, err := dc.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return decodeManifestHead(io.LimitReader(r, maxManifestHead))
}

// decodeManifestHead decodes the fields before "files" (the last field the mirror writes).
func decodeManifestHead(r io.Reader) (*Manifest, error) {
	d := json.NewDecoder(r)
	var m Manifest
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("manifest: not a JSON object (%v)", err)
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("manifest head: %w", err)
		}
		key, _ := t.(string)
		var dst any
		switch key {
		case "files":
			return &m, nil
		case "v":
			dst = &m.V
		case "id":
			dst = &m.ID
		case "rule":
			dst = &m.Rule
		case "job":
			dst = &m.Job
		case "step":
			dst = &m.Step
		case "source":
			dst = &m.Source
		case "owner":
			dst = &m.Owner
		case "completed_ms":
			dst = &m.CompletedAt
		default:
			dst = new(json.RawMessage)
		}
		if err := d.Decode(dst); err != nil {
			return nil, fmt.Errorf("manifest head: %s: %w", key, err)
		}
	}
	return &m, nil
}
