package xformgraph

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// RunFunc executes one op on one value. It must be deterministic given (env, in): random
// choices come only from env.Rand.
type RunFunc func(ctx context.Context, env *Env, in Value) (Value, error)

// OpDef declares an op: its name in graph specs, accepted input kinds, output kind,
// parameter schema and implementation. See the package doc for a complete example.
type OpDef struct {
	Name   string
	Doc    string
	In     []Kind // accepted input kinds
	Out    Kind   // output kind, or KindSame
	Params []ParamSpec
	// Check validates relations between parameters (optional).
	Check func(p Params) error
	// Infer computes what is statically known about the output (optional; without it the
	// output is Static{Kind: Out} with unknown dimensions). Used for the output-size limit.
	Infer func(p Params, in Static) (Static, error)
	// Prepare builds what a node of this op computes once from its parameters (optional),
	// at Compile after Check: e.g. a parsed tokenizer. Its result, immutable and shared by
	// every Run of the graph, is Env.Prepared.
	Prepare func(p Params) (any, error)
	Run     RunFunc
	// Lazy marks ops of this package that accept lazy values (see Value); others get
	// materialized input.
	Lazy bool
}

// Registry maps op names to definitions. The package registry (Register, Lookup) is filled
// by init functions and read-only afterwards; tests may build their own with NewRegistry.
type Registry struct {
	mu  sync.RWMutex
	ops map[string]*OpDef
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{ops: map[string]*OpDef{}} }

var defaultRegistry = NewRegistry()

// DefaultRegistry is the registry that Register fills and Compile uses by default.
func DefaultRegistry() *Registry { return defaultRegistry }

// Register adds def to the package registry. It panics on a malformed or duplicate
// definition, which is a programming error caught at init.
func Register(def OpDef) { defaultRegistry.MustRegister(def) }

// MustRegister adds def or panics.
func (r *Registry) MustRegister(def OpDef) {
	if err := r.Register(def); err != nil {
		panic(err)
	}
}

// Register adds def.
func (r *Registry) Register(def OpDef) error {
	if def.Name == "" || def.Run == nil || len(def.In) == 0 || def.Out == KindInvalid {
		return fmt.Errorf("xformgraph: op %q: Name, In, Out and Run are required", def.Name)
	}
	seen := map[string]bool{}
	for _, p := range def.Params {
		if p.Name == "" || p.Type == 0 || seen[p.Name] {
			return fmt.Errorf("xformgraph: op %q: bad or duplicate parameter %q", def.Name, p.Name)
		}
		seen[p.Name] = true
		if p.Default != nil {
			if _, err := convertParam(p, p.Default); err != nil {
				return fmt.Errorf("xformgraph: op %q: default of %q: %v", def.Name, p.Name, err)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.ops[def.Name]; dup {
		return fmt.Errorf("xformgraph: op %q registered twice", def.Name)
	}
	d := def
	r.ops[def.Name] = &d
	return nil
}

// Lookup returns the definition of op name.
func (r *Registry) Lookup(name string) (*OpDef, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.ops[name]
	return d, ok
}

// Names lists registered ops, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.ops))
	for n := range r.ops {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
