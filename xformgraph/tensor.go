package xformgraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// DType is the element type of a Tensor. The numeric values are part of the frame format
// (package frame) and of the proto: never renumber.
type DType uint8

const (
	DTypeInvalid  DType = 0
	DTypeUint8    DType = 1
	DTypeFloat16  DType = 2 // IEEE 754 binary16
	DTypeBFloat16 DType = 3 // top 16 bits of float32, round-to-nearest-even
	DTypeFloat32  DType = 4
	DTypeInt32    DType = 5 // token ids and masks (little-endian two's complement)
	DTypeInt64    DType = 6
)

// Size is the element size in bytes.
func (d DType) Size() int {
	switch d {
	case DTypeUint8:
		return 1
	case DTypeFloat16, DTypeBFloat16:
		return 2
	case DTypeFloat32, DTypeInt32:
		return 4
	case DTypeInt64:
		return 8
	}
	return 0
}

func (d DType) String() string {
	switch d {
	case DTypeUint8:
		return "uint8"
	case DTypeFloat16:
		return "float16"
	case DTypeBFloat16:
		return "bfloat16"
	case DTypeFloat32:
		return "float32"
	case DTypeInt32:
		return "int32"
	case DTypeInt64:
		return "int64"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType maps the names used in graph specs ("uint8", "float16", "bfloat16", "float32",
// "int32", "int64").
func ParseDType(s string) (DType, bool) {
	for _, d := range []DType{DTypeUint8, DTypeFloat16, DTypeBFloat16, DTypeFloat32, DTypeInt32, DTypeInt64} {
		if d.String() == s {
			return d, true
		}
	}
	return DTypeInvalid, false
}

// Layout names the meaning of a Tensor's axes. Numeric values are part of the frame format.
type Layout uint8

const (
	LayoutInvalid Layout = 0
	LayoutHWC     Layout = 1 // height, width, channel
	LayoutCHW     Layout = 2 // channel, height, width
	LayoutTHWC    Layout = 3 // time, height, width, channel
	LayoutTCHW    Layout = 4 // time, channel, height, width
	LayoutL       Layout = 5 // one token sequence: length
	LayoutNL      Layout = 6 // rows of token sequences: row, length
)

func (l Layout) String() string {
	switch l {
	case LayoutHWC:
		return "HWC"
	case LayoutCHW:
		return "CHW"
	case LayoutTHWC:
		return "THWC"
	case LayoutTCHW:
		return "TCHW"
	case LayoutL:
		return "L"
	case LayoutNL:
		return "NL"
	}
	return fmt.Sprintf("layout(%d)", uint8(l))
}

// Rank is the number of axes the layout has.
func (l Layout) Rank() int {
	switch l {
	case LayoutL:
		return 1
	case LayoutNL:
		return 2
	case LayoutHWC, LayoutCHW:
		return 3
	case LayoutTHWC, LayoutTCHW:
		return 4
	}
	return 0
}

// ParseLayout maps "HWC", "CHW", "THWC", "TCHW", "L", "NL".
func ParseLayout(s string) (Layout, bool) {
	for _, l := range []Layout{LayoutHWC, LayoutCHW, LayoutTHWC, LayoutTCHW, LayoutL, LayoutNL} {
		if l.String() == s {
			return l, true
		}
	}
	return LayoutInvalid, false
}

// Tensor is a dense row-major array. Data holds the elements little-endian, exactly
// Elems()*DType.Size() bytes, so it can be written to a frame or hashed as is.
type Tensor struct {
	DType  DType
	Layout Layout
	Shape  []int // len == Layout.Rank(), axes in Layout order
	Data   []byte
	// pooled: Data came from tensorBytes and may go back through Output.Release.
	pooled bool
}

// tensorPools recycle tensor memory released by Output.Release, one pool per power-of-two
// capacity class (2^12 .. 2^30 bytes).
var tensorPools [31]sync.Pool

func tensorClass(n int) int {
	c := max(bits.Len(uint(n-1)), 12)
	if c >= len(tensorPools) {
		return -1
	}
	return c
}

// tensorBytes returns n bytes for a tensor the caller writes completely: recycled memory
// holds an earlier tensor's bytes, so a producer that could leave a byte unwritten must
// allocate with make instead.
func tensorBytes(n int) (b []byte, pooled bool) {
	c := tensorClass(n)
	if c < 0 || n <= 0 {
		return make([]byte, n), false
	}
	if p, ok := tensorPools[c].Get().(*[]byte); ok {
		return (*p)[:n], true
	}
	return make([]byte, n, 1<<c), true
}

// release returns t's memory for reuse (t.Data is nil afterwards).
func (t *Tensor) release() {
	if t == nil || !t.pooled || t.Data == nil {
		return
	}
	b := t.Data[:cap(t.Data)]
	t.Data, t.pooled = nil, false
	if c := tensorClass(len(b)); c >= 0 && 1<<c == len(b) {
		tensorPools[c].Put(&b)
	}
}

// Elems is the product of Shape.
func (t *Tensor) Elems() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Validate checks that dtype, layout, shape and data length agree.
func (t *Tensor) Validate() error {
	if t.DType.Size() == 0 {
		return fmt.Errorf("tensor: bad dtype %v", t.DType)
	}
	if t.Layout.Rank() == 0 || len(t.Shape) != t.Layout.Rank() {
		return fmt.Errorf("tensor: layout %v with shape %v", t.Layout, t.Shape)
	}
	for _, d := range t.Shape {
		if d <= 0 {
			return fmt.Errorf("tensor: shape %v", t.Shape)
		}
	}
	if len(t.Data) != t.Elems()*t.DType.Size() {
		return fmt.Errorf("tensor: %d bytes for %v %v", len(t.Data), t.DType, t.Shape)
	}
	return nil
}

// Float32At decodes element i whatever the dtype (for tests and small readers; hot paths
// work on Data directly).
func (t *Tensor) Float32At(i int) float32 {
	switch t.DType {
	case DTypeUint8:
		return float32(t.Data[i])
	case DTypeFloat16:
		return Float16ToFloat32(binary.LittleEndian.Uint16(t.Data[2*i:]))
	case DTypeBFloat16:
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
	case DTypeFloat32:
		return math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	case DTypeInt32:
		return float32(int32(binary.LittleEndian.Uint32(t.Data[4*i:])))
	case DTypeInt64:
		return float32(int64(binary.LittleEndian.Uint64(t.Data[8*i:])))
	}
	return 0
}

// Int64At decodes element i of an integer tensor (int32, int64 or uint8).
func (t *Tensor) Int64At(i int) int64 {
	switch t.DType {
	case DTypeUint8:
		return int64(t.Data[i])
	case DTypeInt32:
		return int64(int32(binary.LittleEndian.Uint32(t.Data[4*i:])))
	case DTypeInt64:
		return int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return int64(t.Float32At(i))
}

// Float32ToBFloat16 rounds to nearest even; NaN stays NaN.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Float32ToFloat16 converts to IEEE binary16 with round-to-nearest-even, overflow to Inf,
// gradual underflow to subnormals.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		rem := mant & ((1 << shift) - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is the correct rounding (up to Inf)
	}
	return sign | uint16(r)
}

// Float16ToFloat32 is exact.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / 1024 / 16384
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
