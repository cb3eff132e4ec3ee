package xformgraph

import (
	"fmt"
	"regexp"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
)

// SpecVersion is the only graph spec version this package runs.
const SpecVersion = 1

// InputID is the pseudo node that carries Sample.Data (KindBytes): a sample's primary media
// member (its first media member), or the whole sample when it is one file.
const InputID = "input"

// MemberPrefix starts the pseudo nodes of a sample's named members: "input:jpg",
// "input:txt", "input:left.png" carry the bytes of the member of that name
// (Sample.Members; KindBytes). A sample without that member fails with ErrMissingMember.
const MemberPrefix = "input:"

var memberRe = regexp.MustCompile(`^[!-.0-~]{1,128}$`) // printable ASCII, no space or '/'

// isInput reports whether id is a graph input (InputID or a member input) and, for a member
// input, its member name.
func isInput(id string) (member string, ok bool) {
	if id == InputID {
		return "", true
	}
	if len(id) > len(MemberPrefix) && id[:len(MemberPrefix)] == MemberPrefix {
		return id[len(MemberPrefix):], true
	}
	return "", false
}

var nodeIDRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseJSON reads the JSON form of a graph (protojson of newtricks.xform.v1.Graph).
// Unknown fields are an error, so a typo never silently drops a setting.
func ParseJSON(b []byte) (*xformv1.Graph, error) {
	g := &xformv1.Graph{}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(b, g); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidGraph, err)
	}
	return g, nil
}

// MarshalJSON renders g in the JSON form, deterministically indented.
func MarshalJSON(g *xformv1.Graph) ([]byte, error) {
	return protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(g)
}

// Node is a compiled node.
type Node struct {
	ID     string
	Op     *OpDef
	Input  string // node id or InputID
	Params Params
	Out    Static // statically known output
	// Prepared is OpDef.Prepare's result (nil without Prepare).
	Prepared any
}

// Graph is a validated, executable graph. It is immutable and safe for concurrent Run.
type Graph struct {
	Name    string
	Seed    uint64
	Limits  Limits
	Nodes   []*Node // topological order, only nodes that some output needs
	Outputs []string
	// Sources[i] is the input output i is made from: "" for InputID, else a member name.
	Sources []string
	// Members are the member names the graph reads (its "input:NAME" nodes), sorted.
	Members []string
	index   map[string]int
}

// UsesPrimary reports whether some output is made from InputID.
func (g *Graph) UsesPrimary() bool {
	for _, s := range g.Sources {
		if s == "" {
			return true
		}
	}
	return false
}

// Compile validates spec completely (structure, op names, parameter types and ranges,
// input/output kinds along every edge, static output sizes against limits) and returns a
// runnable graph. reg nil means DefaultRegistry(); base holds the runner's configured
// limits, which the spec's limits may only tighten.
func Compile(spec *xformv1.Graph, reg *Registry, base Limits) (*Graph, error) {
	if reg == nil {
		reg = DefaultRegistry()
	}
	if spec == nil {
		return nil, fmt.Errorf("%w: nil spec", ErrInvalidGraph)
	}
	if spec.GetVersion() != SpecVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrInvalidGraph, spec.GetVersion(), SpecVersion)
	}
	lim := tighten(base.WithDefaults(), spec.GetLimits())
	byID := map[string]*xformv1.Node{}
	for i, n := range spec.GetNodes() {
		if _, in := isInput(n.GetId()); !nodeIDRe.MatchString(n.GetId()) || in {
			return nil, fmt.Errorf("%w: node %d: bad id %q", ErrInvalidGraph, i, n.GetId())
		}
		if byID[n.GetId()] != nil {
			return nil, fmt.Errorf("%w: duplicate node id %q", ErrInvalidGraph, n.GetId())
		}
		byID[n.GetId()] = n
	}
	if len(spec.GetOutputs()) == 0 {
		return nil, fmt.Errorf("%w: no outputs", ErrInvalidGraph)
	}
	g := &Graph{Name: spec.GetName(), Seed: spec.GetSeed(), Limits: lim, index: map[string]int{}}
	// Depth-first from each output: gives a topological order of the needed nodes and
	// finds cycles (a node met again while still on the stack).
	const (
		unseen = iota
		onStack
		done
	)
	state := map[string]int{}
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		if name, ok := isInput(id); ok {
			if name != "" && !memberRe.MatchString(name) {
				return fmt.Errorf("%w: input %q of %q: a member name is 1..128 printable ASCII bytes without space or '/'", ErrInvalidGraph, id, last(path))
			}
			return nil
		}
		n := byID[id]
		if n == nil {
			return fmt.Errorf("%w: %q referenced by %q is not a node", ErrInvalidGraph, id, last(path))
		}
		switch state[id] {
		case onStack:
			return fmt.Errorf("%w: cycle through %q (%v)", ErrInvalidGraph, id, append(path, id))
		case done:
			return nil
		}
		state[id] = onStack
		if n.GetInput() == "" {
			return fmt.Errorf("%w: node %q has no input", ErrInvalidGraph, id)
		}
		if err := visit(n.GetInput(), append(path, id)); err != nil {
			return err
		}
		state[id] = done
		cn, err := compileNode(reg, n, g, lim)
		if err != nil {
			return err
		}
		g.index[id] = len(g.Nodes)
		g.Nodes = append(g.Nodes, cn)
		return nil
	}
	seen := map[string]bool{}
	for _, o := range spec.GetOutputs() {
		if seen[o] {
			return nil, fmt.Errorf("%w: output %q listed twice", ErrInvalidGraph, o)
		}
		seen[o] = true
		if byID[o] == nil {
			return nil, fmt.Errorf("%w: output %q is not a node", ErrInvalidGraph, o)
		}
		if err := visit(o, nil); err != nil {
			return nil, err
		}
		if b := g.Nodes[g.index[o]].Out.Bound(); b > lim.MaxOutputBytes {
			return nil, fmt.Errorf("%w: output %q is %d bytes, limit %d", ErrLimit, o, b, lim.MaxOutputBytes)
		}
		g.Outputs = append(g.Outputs, o)
		g.Sources = append(g.Sources, g.sourceOf(o))
	}
	members := map[string]bool{}
	for _, n := range g.Nodes {
		if name, ok := isInput(n.Input); ok && name != "" && !members[name] {
			members[name] = true
			g.Members = append(g.Members, name)
		}
	}
	sort.Strings(g.Members)
	return g, nil
}

// sourceOf follows a node's inputs (every node has one) back to the graph input it is made
// from.
func (g *Graph) sourceOf(id string) string {
	for {
		if name, ok := isInput(id); ok {
			return name
		}
		id = g.Nodes[g.index[id]].Input
	}
}

func last(p []string) string {
	if len(p) == 0 {
		return "outputs"
	}
	return p[len(p)-1]
}

func compileNode(reg *Registry, n *xformv1.Node, g *Graph, lim Limits) (*Node, error) {
	def, ok := reg.Lookup(n.GetOp())
	if !ok {
		return nil, fmt.Errorf("%w: node %q: %q (known: %v)", ErrUnknownOp, n.GetId(), n.GetOp(), reg.Names())
	}
	in := Static{Kind: KindBytes}
	if _, ok := isInput(n.GetInput()); !ok {
		in = g.Nodes[g.index[n.GetInput()]].Out
	}
	accepted := false
	for _, k := range def.In {
		accepted = accepted || k == in.Kind
	}
	if !accepted {
		return nil, fmt.Errorf("%w: node %q (%s) takes %v, but its input %q gives %v",
			ErrTypeMismatch, n.GetId(), def.Name, def.In, n.GetInput(), in.Kind)
	}
	var raw map[string]any
	if n.GetParams() != nil {
		raw = n.GetParams().AsMap()
	}
	p, err := checkParams(def.Params, raw)
	if err != nil {
		return nil, fmt.Errorf("node %q (%s): %w", n.GetId(), def.Name, err)
	}
	if def.Check != nil {
		if err := def.Check(p); err != nil {
			return nil, fmt.Errorf("node %q (%s): %w: %v", n.GetId(), def.Name, ErrBadParam, err)
		}
	}
	out := Static{Kind: def.Out}
	if def.Out == KindSame {
		out = in
	}
	if def.Infer != nil {
		if out, err = def.Infer(p, in); err != nil {
			return nil, fmt.Errorf("node %q (%s): %w", n.GetId(), def.Name, err)
		}
	}
	if out.H > 0 && out.W > 0 && int64(out.H)*int64(out.W) > lim.MaxPixels {
		return nil, fmt.Errorf("%w: node %q (%s) makes %dx%d pixels, limit %d", ErrLimit, n.GetId(), def.Name, out.W, out.H, lim.MaxPixels)
	}
	var prep any
	if def.Prepare != nil {
		if prep, err = def.Prepare(p); err != nil {
			return nil, fmt.Errorf("node %q (%s): %w", n.GetId(), def.Name, err)
		}
	}
	return &Node{ID: n.GetId(), Op: def, Input: n.GetInput(), Params: p, Out: out, Prepared: prep}, nil
}

func tighten(l Limits, s *xformv1.Limits) Limits {
	if s == nil {
		return l
	}
	if v := s.GetMaxPixels(); v > 0 && v < l.MaxPixels {
		l.MaxPixels = v
	}
	if v := int(s.GetMaxFrames()); v > 0 && v < l.MaxFrames {
		l.MaxFrames = v
	}
	if v := s.GetMaxOutputBytes(); v > 0 && v < l.MaxOutputBytes {
		l.MaxOutputBytes = v
	}
	if v := s.GetMaxInputBytes(); v > 0 && v < l.MaxInputBytes {
		l.MaxInputBytes = v
	}
	return l
}

// NewNodeSpec is a helper for building specs in Go code and tests.
func NewNodeSpec(id, op, input string, params map[string]any) *xformv1.Node {
	var s *structpb.Struct
	if params != nil {
		var err error
		if s, err = structpb.NewStruct(params); err != nil {
			panic(fmt.Sprintf("NewNodeSpec %s: %v", id, err))
		}
	}
	return &xformv1.Node{Id: id, Op: op, Input: input, Params: s}
}
