package xformgraph

import (
	"context"
	"fmt"
)

// Sample is one training sample: a stable key (e.g. its path and offset), the epoch and
// the encoded bytes.
type Sample struct {
	Key   string
	Epoch uint64
	Data  []byte
	// Members are the sample's named members, for the graph's "input:NAME" nodes (may be
	// nil for a graph that reads only Data).
	Members map[string][]byte
}

// Output holds the graph's output values in Graph.Outputs order.
type Output struct {
	Names  []string
	Values []Value
}

// Run executes g on s. Nodes run one after another in topological order on the calling
// goroutine: parallelism is across samples, which keeps each sample's bytes independent
// of scheduling. Errors are *SampleError naming the sample and node.
func (g *Graph) Run(ctx context.Context, s Sample) (*Output, error) {
	if int64(len(s.Data)) > g.Limits.MaxInputBytes {
		return nil, &SampleError{Key: s.Key, Err: fmt.Errorf("%w: input %d bytes, limit %d", ErrLimit, len(s.Data), g.Limits.MaxInputBytes)}
	}
	vals := make([]Value, len(g.Nodes))
	var done []func()
	defer func() {
		for _, f := range done {
			f()
		}
	}()
	for i, n := range g.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, &SampleError{Key: s.Key, Node: n.ID, Op: n.Op.Name, Err: err}
		}
		var in Value
		if name, ok := isInput(n.Input); !ok {
			in = vals[g.index[n.Input]]
		} else if name == "" {
			in = Value{Kind: KindBytes, Bytes: s.Data}
		} else if b, ok := s.Members[name]; ok {
			if int64(len(b)) > g.Limits.MaxInputBytes {
				return nil, &SampleError{Key: s.Key, Node: n.Input, Err: fmt.Errorf("%w: member %q has %d bytes, limit %d", ErrLimit, name, len(b), g.Limits.MaxInputBytes)}
			}
			in = Value{Kind: KindBytes, Bytes: b}
		} else {
			return nil, &SampleError{Key: s.Key, Node: n.ID, Op: n.Op.Name, Err: fmt.Errorf("%w: the sample has no member %q", ErrMissingMember, name)}
		}
		env := NewEnv(g.Seed, s.Key, s.Epoch, n.ID, n.Params, g.Limits)
		env.done = &done
		env.Prepared = n.Prepared
		if !n.Op.Lazy {
			var err error
			if in, err = in.materialize(); err != nil {
				return nil, &SampleError{Key: s.Key, Node: n.Input, Err: err}
			}
		}
		out, err := runOp(ctx, n, env, in)
		if err != nil {
			return nil, &SampleError{Key: s.Key, Node: n.ID, Op: n.Op.Name, Err: err}
		}
		want := n.Out.Kind
		if out.Kind != want {
			return nil, &SampleError{Key: s.Key, Node: n.ID, Op: n.Op.Name, Err: fmt.Errorf("%w: op returned %v, declared %v", ErrTypeMismatch, out.Kind, want)}
		}
		vals[i] = out
	}
	o := &Output{Names: g.Outputs}
	for _, id := range g.Outputs {
		v, err := vals[g.index[id]].materialize()
		if err != nil {
			return nil, &SampleError{Key: s.Key, Node: id, Err: err}
		}
		if v.Size() > g.Limits.MaxOutputBytes {
			return nil, &SampleError{Key: s.Key, Node: id, Err: fmt.Errorf("%w: output %d bytes, limit %d", ErrLimit, v.Size(), g.Limits.MaxOutputBytes)}
		}
		o.Values = append(o.Values, v)
	}
	return o, nil
}

// Release hands the memory of o's tensors back for the next samples' outputs: a caller
// that is done with them (it copied them into frames, or into its own buffers) saves the
// allocation and zeroing of a new tensor per sample. o and every Tensor, Data slice or
// view of them must not be used afterwards. Optional: unreleased outputs are garbage
// collected as usual.
func (o *Output) Release() {
	if o == nil {
		return
	}
	for i := range o.Values {
		if t := o.Values[i].Tensor; t != nil {
			t.release()
		}
	}
	o.Values = nil
}

// runOp turns a panic inside an op into an error: a malformed sample must never take the
// DataNode extension down.
func runOp(ctx context.Context, n *Node, env *Env, in Value) (out Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: op panicked: %v", ErrDecode, r)
		}
	}()
	return n.Op.Run(ctx, env, in)
}
