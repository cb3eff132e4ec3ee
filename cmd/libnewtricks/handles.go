package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// Status codes returned by the C functions (NTX_* in the generated header's comments and in
// python/src/newtricks/transforms.py). 0 is success; each other code names the sentinel error
// of package xformgraph that the failure wraps, so callers branch without parsing messages.
const (
	codeOK           = 0
	codeInvalidGraph = 1 // xformgraph.ErrInvalidGraph
	codeUnknownOp    = 2 // xformgraph.ErrUnknownOp
	codeTypeMismatch = 3 // xformgraph.ErrTypeMismatch
	codeBadParam     = 4 // xformgraph.ErrBadParam
	codeLimit        = 5 // xformgraph.ErrLimit
	codeDecode       = 6 // xformgraph.ErrDecode
	codeUnsupported  = 7 // xformgraph.ErrUnsupported
	codeBadHandle    = 8 // unknown or freed graph handle
	codeBadArgument  = 9 // NULL pointer or negative length from the caller
	codeInternal     = 10
	// codeEnd (11, reader.go): the schedule has no more steps.
)

var (
	errBadHandle   = errors.New("unknown or freed graph handle")
	errBadArgument = errors.New("bad argument")
)

// codeOf maps an error to its status code.
func codeOf(err error) int {
	switch {
	case err == nil:
		return codeOK
	case errors.Is(err, xformgraph.ErrInvalidGraph):
		return codeInvalidGraph
	case errors.Is(err, xformgraph.ErrUnknownOp):
		return codeUnknownOp
	case errors.Is(err, xformgraph.ErrTypeMismatch):
		return codeTypeMismatch
	case errors.Is(err, xformgraph.ErrBadParam):
		return codeBadParam
	case errors.Is(err, xformgraph.ErrLimit):
		return codeLimit
	case errors.Is(err, xformgraph.ErrDecode):
		return codeDecode
	case errors.Is(err, xformgraph.ErrUnsupported):
		return codeUnsupported
	case errors.Is(err, errBadHandle):
		return codeBadHandle
	case errors.Is(err, errBadArgument), errors.Is(err, schedule.ErrInvalid), errors.Is(err, reader.ErrConfig):
		return codeBadArgument
	}
	return codeInternal
}

// graphs holds the compiled graphs behind the opaque handles given to C. A handle is a
// counter value, never a pointer: C never holds Go memory, and a stale or forged handle is
// an error instead of a crash.
type graphs struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*xformgraph.Graph
}

func newGraphs() *graphs { return &graphs{m: map[uint64]*xformgraph.Graph{}} }

// compile parses a graph spec (JSON form if it starts with '{' after blanks, else the binary
// proto) and returns its handle.
func (t *graphs) compile(spec []byte) (uint64, error) {
	g, err := compileSpec(spec)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.m[t.next] = g
	return t.next, nil
}

func (t *graphs) get(h uint64) (*xformgraph.Graph, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.m[h]
	if !ok {
		return nil, fmt.Errorf("graph %d: %w", h, errBadHandle)
	}
	return g, nil
}

func (t *graphs) free(h uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[h]; !ok {
		return fmt.Errorf("graph %d: %w", h, errBadHandle)
	}
	delete(t.m, h)
	return nil
}

func (t *graphs) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// run executes graph h on one sample and returns its output frames (package frame, one per
// graph output, back to back) with their total encoded size; write them with writeFrames.
func (t *graphs) run(h uint64, key string, epoch uint64, data []byte) ([]*frame.Frame, int, error) {
	g, err := t.get(h)
	if err != nil {
		return nil, 0, err
	}
	out, err := g.Run(context.Background(), xformgraph.Sample{Key: key, Epoch: epoch, Data: data})
	if err != nil {
		return nil, 0, err
	}
	frames := make([]*frame.Frame, 0, len(out.Values))
	size := 0
	for i, v := range out.Values {
		f, err := xformgraph.ToFrame(v)
		if err != nil {
			return nil, 0, fmt.Errorf("sample %q: output %q: %w", key, out.Names[i], err)
		}
		if v.Kind == xformgraph.KindBytes {
			// A passthrough output aliases the caller's input buffer; copy it so the
			// result never depends on memory the caller may reuse.
			f.Payload = append([]byte(nil), f.Payload...)
		}
		frames = append(frames, f)
		size += encodedSize(f)
	}
	return frames, size, nil
}

// encodedSize is the length frame.(*Frame).Write produces for f.
func encodedSize(f *frame.Frame) int {
	return frame.HeaderSize + 8*len(f.Shape) + (len(f.Domain)+7)&^7 + len(f.Payload)
}

// writeFrames writes frames into dst, which must be exactly their encoded size.
func writeFrames(dst []byte, frames []*frame.Frame) error {
	w := &fixedWriter{b: dst}
	for _, f := range frames {
		if err := f.Write(w); err != nil {
			return err
		}
	}
	if w.n != len(dst) {
		return fmt.Errorf("frames wrote %d bytes, expected %d", w.n, len(dst))
	}
	return nil
}

// fixedWriter writes into a preallocated buffer (C memory) and fails rather than grow.
type fixedWriter struct {
	b []byte
	n int
}

func (w *fixedWriter) Write(p []byte) (int, error) {
	if len(p) > len(w.b)-w.n {
		return 0, io.ErrShortBuffer
	}
	w.n += copy(w.b[w.n:], p)
	return len(p), nil
}
