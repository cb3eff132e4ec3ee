package xformgraph

import (
	"fmt"
	"math"
	"slices"
)

// ParamType is the type of one op parameter.
type ParamType uint8

const (
	ParamInt    ParamType = iota + 1 // int64; JSON number without fraction
	ParamFloat                       // float64
	ParamBool                        // bool
	ParamString                      // string, optionally restricted to Enum
	ParamFloats                      // []float64; Min/Max apply to each element, Len/MinLen/MaxLen to the count
	ParamInts                        // []int64; idem
)

func (t ParamType) String() string {
	return [...]string{"?", "int", "float", "bool", "string", "float list", "int list"}[min(int(t), 6)]
}

// ParamSpec declares one parameter of an op. Compile checks each given value against it and
// fills Default when the parameter is absent (absent without Default and Required: error).
type ParamSpec struct {
	Name     string
	Type     ParamType
	Doc      string
	Required bool
	Default  any      // int, int64, float64, bool, string, []float64 or []int64
	Min, Max float64  // inclusive range for numbers; both 0 = unbounded
	Enum     []string // allowed strings
	MinLen   int      // lists: element count bounds (0 = unbounded)
	MaxLen   int
}

// Params are an op instance's checked parameters, keyed by name, always complete (defaults
// filled). Values are int64, float64, bool, string, []float64 or []int64.
type Params map[string]any

// Int returns an int parameter (0 if absent, which Compile rules out for declared ones).
func (p Params) Int(name string) int64 { v, _ := p[name].(int64); return v }

// Float returns a float parameter.
func (p Params) Float(name string) float64 { v, _ := p[name].(float64); return v }

// Bool returns a bool parameter.
func (p Params) Bool(name string) bool { v, _ := p[name].(bool); return v }

// String returns a string parameter.
func (p Params) String(name string) string { v, _ := p[name].(string); return v }

// Floats returns a float list parameter.
func (p Params) Floats(name string) []float64 { v, _ := p[name].([]float64); return v }

// Ints returns an int list parameter.
func (p Params) Ints(name string) []int64 { v, _ := p[name].([]int64); return v }

// Has reports whether the parameter has a value (given or default).
func (p Params) Has(name string) bool { _, ok := p[name]; return ok }

// checkParams converts raw values (as decoded from JSON or proto Struct: float64, bool,
// string, []any, or already typed) into Params against specs.
func checkParams(specs []ParamSpec, raw map[string]any) (Params, error) {
	out := Params{}
	for name := range raw {
		if !slices.ContainsFunc(specs, func(s ParamSpec) bool { return s.Name == name }) {
			return nil, fmt.Errorf("%w: unknown parameter %q", ErrBadParam, name)
		}
	}
	for _, s := range specs {
		v, ok := raw[s.Name]
		if !ok || v == nil {
			if s.Default != nil {
				v = s.Default
			} else if s.Required {
				return nil, fmt.Errorf("%w: missing required parameter %q", ErrBadParam, s.Name)
			} else {
				continue
			}
		}
		cv, err := convertParam(s, v)
		if err != nil {
			return nil, fmt.Errorf("%w: parameter %q: %v", ErrBadParam, s.Name, err)
		}
		out[s.Name] = cv
	}
	return out, nil
}

func convertParam(s ParamSpec, v any) (any, error) {
	num := func(x any) (float64, bool) {
		switch n := x.(type) {
		case float64:
			return n, true
		case float32:
			return float64(n), true
		case int:
			return float64(n), true
		case int64:
			return float64(n), true
		case int32:
			return float64(n), true
		}
		return 0, false
	}
	inRange := func(f float64) error {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%v is not finite", f)
		}
		if (s.Min != 0 || s.Max != 0) && (f < s.Min || f > s.Max) {
			return fmt.Errorf("%v out of range [%v, %v]", f, s.Min, s.Max)
		}
		return nil
	}
	asInt := func(x any) (int64, error) {
		f, ok := num(x)
		if !ok {
			return 0, fmt.Errorf("want int, got %T", x)
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, fmt.Errorf("want int, got %v", f)
		}
		return int64(f), inRange(f)
	}
	asFloat := func(x any) (float64, error) {
		f, ok := num(x)
		if !ok {
			return 0, fmt.Errorf("want number, got %T", x)
		}
		return f, inRange(f)
	}
	list := func() ([]any, error) {
		var l []any
		switch x := v.(type) {
		case []any:
			l = x
		case []float64:
			for _, e := range x {
				l = append(l, e)
			}
		case []int64:
			for _, e := range x {
				l = append(l, e)
			}
		case []int:
			for _, e := range x {
				l = append(l, e)
			}
		default:
			return nil, fmt.Errorf("want list, got %T", v)
		}
		if (s.MinLen > 0 && len(l) < s.MinLen) || (s.MaxLen > 0 && len(l) > s.MaxLen) {
			return nil, fmt.Errorf("list of %d elements, want %d..%d", len(l), s.MinLen, s.MaxLen)
		}
		return l, nil
	}
	switch s.Type {
	case ParamInt:
		return asInt(v)
	case ParamFloat:
		return asFloat(v)
	case ParamBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want bool, got %T", v)
		}
		return b, nil
	case ParamString:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want string, got %T", v)
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return nil, fmt.Errorf("%q not one of %v", str, s.Enum)
		}
		return str, nil
	case ParamFloats:
		l, err := list()
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(l))
		for i, e := range l {
			if out[i], err = asFloat(e); err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
		}
		return out, nil
	case ParamInts:
		l, err := list()
		if err != nil {
			return nil, err
		}
		out := make([]int64, len(l))
		for i, e := range l {
			if out[i], err = asInt(e); err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad spec type %v", s.Type)
}
