package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for deterministic throttling.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)} }

func TestAutoIsLinesOffTerminal(t *testing.T) {
	var b bytes.Buffer
	if m := New(&b, Options{}).Mode(); m != Lines {
		t.Errorf("mode on a buffer: %v, want lines", m)
	}
	if m := New(&b, Options{Mode: Bar, JSON: true}).Mode(); m != JSON {
		t.Errorf("JSON flag: mode %v, want json", m)
	}
}

func TestLinesThrottle(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := New(&b, Options{Mode: Lines, Every: 5 * time.Second, Now: c.now})
	task := r.Task("files ready", 100, Count) // line 1: start
	task.Set(1)                               // same tenth, too soon: silent
	task.Set(5)                               // silent
	c.add(6 * time.Second)
	task.Set(6)                            // moved and Every passed: line 2
	task.Set(7)                            // silent
	task.Set(10)                           // crosses a tenth: line 3
	task.Status("waiting for 2 DataNodes") // line 4
	task.Status("waiting for 2 DataNodes") // unchanged: silent
	c.add(time.Minute)
	task.Set(10) // no movement: silent even after Every
	task.Done()  // line 5
	task.Set(50) // after Done: ignored
	r.Close()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"15:04:05 files ready: 0/100 (0%)",
		"15:04:11 files ready: 6/100 (6%)",
		"15:04:11 files ready: 10/100 (10%)",
		"15:04:11 files ready: 10/100 (10%) - waiting for 2 DataNodes",
		"15:05:11 files ready: 10/100 (10%) done",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestLinesBytesAndUnknownTotal(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := New(&b, Options{Mode: Lines, Now: c.now})
	task := r.Task("mirrored", 0, Bytes)
	task.Set(1536)
	task.SetTotal(4 << 30) // total known: a tenth bucket appears, so a line
	task.Fail(errors.New("eval cluster unreachable"))
	r.Close()
	out := b.String()
	for _, s := range []string{"mirrored: 0 B\n", "mirrored: 1.5 KiB/4.0 GiB (0%)\n", "mirrored: 1.5 KiB/4.0 GiB (0%) failed: eval cluster unreachable\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := New(&b, Options{JSON: true, Now: c.now})
	r.Printf("cluster %s", "dc-a")
	task := r.Task("datanodes live", 3, Count)
	task.Set(3)
	task.Done()
	fail := r.Task("co-processes healthy", 4, Count)
	fail.Fail(errors.New("boom"))
	r.Close()
	type line struct {
		Time   time.Time `json:"time"`
		Msg    string    `json:"msg"`
		Task   string    `json:"task"`
		State  string    `json:"state"`
		Done   int64     `json:"done"`
		Total  int64     `json:"total"`
		Unit   string    `json:"unit"`
		Status string    `json:"status"`
		Error  string    `json:"error"`
	}
	var got []line
	for _, s := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("not JSON: %q: %v", s, err)
		}
		got = append(got, l)
	}
	if len(got) != 6 {
		t.Fatalf("got %d lines, want 6:\n%s", len(got), b.String())
	}
	if got[0].Msg != "cluster dc-a" || !got[0].Time.Equal(c.now()) {
		t.Errorf("message line: %+v", got[0])
	}
	if g := got[3]; g.Task != "datanodes live" || g.State != "done" || g.Done != 3 || g.Total != 3 || g.Unit != "count" {
		t.Errorf("done line: %+v", g)
	}
	if g := got[5]; g.State != "failed" || g.Error != "boom" {
		t.Errorf("failed line: %+v", g)
	}
}

func TestBarRenders(t *testing.T) {
	var b safeBuffer
	r := New(&b, Options{Mode: Bar})
	task := r.Task("datanodes live", 3, Count)
	task.Status("safe mode")
	task.Set(2)
	task.Set(3)
	task.Done()
	failed := r.Task("co-processes healthy", 4, Count)
	failed.Set(1)
	left := r.Task("never finished", 2, Count)
	left.Set(1)
	failed.Fail(errors.New("datanode-ext 2 restarting"))
	r.Close() // aborts "never finished"
	out := b.String()
	for _, s := range []string{"datanodes live", "3 / 3", "done", "co-processes healthy", "failed", "datanode-ext 2 restarting", "never finished"} {
		if !strings.Contains(out, s) {
			t.Errorf("bar output lacks %q:\n%q", s, out)
		}
	}
}

func TestQuiet(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, Options{Mode: Quiet})
	task := r.Task("x", 1, Count)
	task.Set(1)
	task.Done()
	r.Printf("hello")
	r.Close()
	if b.Len() != 0 {
		t.Errorf("quiet wrote %q", b.String())
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// safeBuffer is written by mpb's render goroutine and read by the test.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDoneAtIsOneLine(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := New(&b, Options{Mode: Lines, Now: c.now})
	task := r.Task("datanodes live", 3, Count)
	task.Status("NameNode in safe mode")
	task.Update(2, "waiting for 1 of 3 DataNodes") // one line, not two
	task.DoneAt(3)
	task.Set(1) // after DoneAt: ignored
	r.Close()
	want := "15:04:05 datanodes live: 0/3 (0%)\n" +
		"15:04:05 datanodes live: 0/3 (0%) - NameNode in safe mode\n" +
		"15:04:05 datanodes live: 2/3 (66%) - waiting for 1 of 3 DataNodes\n" +
		"15:04:05 datanodes live: 3/3 (100%) done\n"
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}
}
