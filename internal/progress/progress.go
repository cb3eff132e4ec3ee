package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// Mode is how progress is shown.
type Mode int

const (
	// Auto is Bar when the writer is a terminal, else Lines.
	Auto Mode = iota
	// Bar draws live bars (mpb), redrawn in place.
	Bar
	// Lines prints one timestamped line per notable change.
	Lines
	// JSON prints one JSON object per notable change.
	JSON
	// Quiet prints nothing.
	Quiet
)

func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Bar:
		return "bar"
	case Lines:
		return "lines"
	case JSON:
		return "json"
	case Quiet:
		return "quiet"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Unit is what a task counts.
type Unit int

const (
	// Count is a plain number of things (files, DataNodes, samples).
	Count Unit = iota
	// Bytes is shown in KiB, MiB, GiB.
	Bytes
)

func (u Unit) String() string {
	if u == Bytes {
		return "bytes"
	}
	return "count"
}

// Options configure a Reporter. The zero value picks Bar or Lines by the writer.
type Options struct {
	// Mode forces a form; Auto (the default) decides by whether the writer is a terminal.
	Mode Mode
	// JSON selects Mode JSON (the commands' --json flag); it wins over Mode.
	JSON bool
	// Every is the longest a running task stays silent in Lines and JSON mode while its
	// value changes. Default 5s.
	Every time.Duration
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
}

// Reporter shows the progress of one command's tasks on one writer.
type Reporter struct {
	w     io.Writer
	mode  Mode
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex // serialises writes and task state in Lines/JSON mode
	p      *mpb.Progress
	tasks  []*Task
	closed bool
}

// New returns a Reporter writing to w (normally the command's stderr).
func New(w io.Writer, o Options) *Reporter {
	r := &Reporter{w: w, mode: o.Mode, every: o.Every, now: o.Now}
	if o.JSON {
		r.mode = JSON
	}
	if r.mode == Auto {
		r.mode = Lines
		if IsTerminal(w) {
			r.mode = Bar
		}
	}
	if r.every <= 0 {
		r.every = 5 * time.Second
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.mode == Bar {
		// ForceTTY: the caller decided this is a terminal (or asked for bars explicitly);
		// mpb would otherwise check again and draw only once, at the end.
		r.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(100), mpb.ForceTTY(), mpb.WithAutoRefresh(),
			mpb.WithRefreshRate(200*time.Millisecond))
	}
	return r
}

// IsTerminal reports whether w is a terminal that bars can be drawn on: one with a width
// (a pseudo-terminal nobody sized, as some CI runners allocate, reports 0 columns, and mpb
// draws nothing there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	return err == nil && cols > 0
}

// Mode is the form this Reporter shows progress in (never Auto).
func (r *Reporter) Mode() Mode { return r.mode }

// Printf writes a message line: above the bars in Bar mode, a plain line in Lines mode, a
// {"msg":...} object in JSON mode.
func (r *Reporter) Printf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	switch r.mode {
	case Quiet:
	case Bar:
		fmt.Fprintln(r.p, msg)
	case JSON:
		r.mu.Lock()
		r.writeJSON(struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}{r.now().UTC(), msg})
		r.mu.Unlock()
	default:
		r.mu.Lock()
		fmt.Fprintf(r.w, "%s %s\n", r.now().Format(time.TimeOnly), msg)
		r.mu.Unlock()
	}
}

// Task starts showing one task. total 0 means not known yet (SetTotal sets it later).
func (r *Reporter) Task(name string, total int64, unit Unit) *Task {
	t := &Task{r: r, name: name, unit: unit, total: max(total, 0), lastBucket: -1}
	t.status.Store("")
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
	if r.mode == Bar {
		t.bar = r.p.New(total, mpb.BarStyle().Lbound("[").Rbound("]"),
			mpb.PrependDecorators(
				decor.Name(name, decor.WC{C: decor.DindentRight | decor.DextraSpace | decor.DSyncWidth}),
				counters(unit),
			),
			mpb.AppendDecorators(
				decor.OnAbort(decor.OnComplete(decor.Percentage(decor.WC{W: 5}), "done"), "failed"),
				decor.Any(func(decor.Statistics) string {
					if s := t.status.Load().(string); s != "" {
						return "  " + s
					}
					return ""
				}),
			),
		)
		return t
	}
	r.mu.Lock()
	t.emitLocked(true)
	r.mu.Unlock()
	return t
}

func counters(u Unit) decor.Decorator {
	if u == Bytes {
		return decor.Counters(decor.SizeB1024(0), "% .1f / % .1f", decor.WC{C: decor.DextraSpace | decor.DSyncWidth})
	}
	return decor.CountersNoUnit("%d / %d", decor.WC{C: decor.DextraSpace | decor.DSyncWidth})
}

// Close stops showing progress: bars of tasks that are still running are marked failed.
// Call it before printing the command's result.
func (r *Reporter) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	tasks := append([]*Task(nil), r.tasks...)
	r.mu.Unlock()
	if r.mode != Bar {
		return
	}
	for _, t := range tasks {
		if !t.finished.Load() {
			t.bar.Abort(false)
		}
	}
	r.p.Wait()
}

func (r *Reporter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	r.w.Write(append(b, '\n'))
}

// Task is one operation whose progress is shown.
type Task struct {
	r    *Reporter
	name string
	unit Unit
	bar  *mpb.Bar // Bar mode only

	status   atomic.Value // string
	finished atomic.Bool

	// Guarded by r.mu (Lines and JSON mode; in Bar mode mpb keeps the numbers).
	done, total int64
	state       string
	err         string
	lastStatus  string
	lastBucket  int64
	lastDone    int64
	lastEmit    time.Time
}

// SetTotal sets the total once it is known.
func (t *Task) SetTotal(n int64) {
	if t.finished.Load() {
		return
	}
	if t.bar != nil {
		t.bar.SetTotal(n, false)
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.total = max(n, 0)
	t.emitLocked(false)
}

// Set sets how much is done.
func (t *Task) Set(n int64) {
	if t.finished.Load() {
		return
	}
	if t.bar != nil {
		t.bar.SetCurrent(n)
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.done = n
	t.emitLocked(false)
}

// Add adds n to how much is done.
func (t *Task) Add(n int64) {
	if t.finished.Load() {
		return
	}
	if t.bar != nil {
		t.bar.IncrInt64(n)
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.done += n
	t.emitLocked(false)
}

// Status sets the short text shown next to the task ("waiting for 2 DataNodes").
func (t *Task) Status(s string) {
	if t.finished.Load() {
		return
	}
	t.status.Store(s)
	if t.bar != nil {
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.emitLocked(false)
}

// Update sets how much is done and the status text together (one line where Set then Status
// could print two).
func (t *Task) Update(n int64, status string) {
	if t.finished.Load() {
		return
	}
	t.status.Store(status)
	if t.bar != nil {
		t.bar.SetCurrent(n)
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.done = n
	t.emitLocked(false)
}

// Done marks the task complete.
func (t *Task) Done() { t.finish(-1) }

// DoneAt sets how much was done and marks the task complete, in one step (one line).
func (t *Task) DoneAt(n int64) { t.finish(n) }

func (t *Task) finish(n int64) {
	if t.finished.Swap(true) {
		return
	}
	if t.bar != nil {
		t.status.Store("")
		if n >= 0 {
			t.bar.SetCurrent(n)
		}
		t.bar.SetTotal(-1, true)
		t.bar.Wait()
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if n >= 0 {
		t.done = n
	}
	t.state = "done"
	t.emitLocked(true)
}

// Fail marks the task failed; err says why.
func (t *Task) Fail(err error) {
	if t.finished.Swap(true) {
		return
	}
	msg := "failed"
	if err != nil {
		msg = err.Error()
	}
	if t.bar != nil {
		t.status.Store(msg)
		t.bar.Abort(false)
		t.bar.Wait()
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.state, t.err = "failed", msg
	t.emitLocked(true)
}

// emitLocked writes a line if something notable changed since the last one (or force).
func (t *Task) emitLocked(force bool) {
	r := t.r
	if r.mode == Quiet || r.closed {
		return
	}
	now := r.now()
	status := t.status.Load().(string)
	bucket := int64(-1)
	if t.total > 0 {
		bucket = min(t.done, t.total) * 10 / t.total
	}
	changed := status != t.lastStatus || bucket != t.lastBucket
	moved := t.done != t.lastDone && now.Sub(t.lastEmit) >= r.every
	if !force && !changed && !moved {
		return
	}
	t.lastStatus, t.lastBucket, t.lastDone, t.lastEmit = status, bucket, t.done, now
	state := t.state
	if state == "" {
		state = "running"
	} else {
		status = "" // a finished task's last status is history
	}
	if r.mode == JSON {
		r.writeJSON(struct {
			Time   time.Time `json:"time"`
			Task   string    `json:"task"`
			State  string    `json:"state"`
			Done   int64     `json:"done"`
			Total  int64     `json:"total"`
			Unit   string    `json:"unit"`
			Status string    `json:"status,omitempty"`
			Error  string    `json:"error,omitempty"`
		}{now.UTC(), t.name, state, t.done, t.total, t.unit.String(), status, t.err})
		return
	}
	line := now.Format(time.TimeOnly) + " " + t.name + ": " + t.amount()
	switch {
	case state == "done":
		line += " done"
	case state == "failed":
		line += " failed: " + t.err
	}
	if status != "" && state == "running" {
		line += " - " + status
	}
	fmt.Fprintln(r.w, line)
}

// amount renders "3/12 (25%)", "1.5 GiB/4.0 GiB (37%)" or "3" when the total is unknown.
func (t *Task) amount() string {
	f := func(n int64) string { return fmt.Sprint(n) }
	if t.unit == Bytes {
		f = HumanBytes
	}
	if t.total <= 0 {
		return f(t.done)
	}
	return fmt.Sprintf("%s/%s (%d%%)", f(t.done), f(t.total), min(t.done, t.total)*100/t.total)
}

// HumanBytes renders n bytes as "512 B", "1.5 KiB", "3.0 GiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
