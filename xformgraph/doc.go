// Package xformgraph runs deterministic transform graphs over training samples: a small DAG
// of typed ops (decode, crop, resize, flip, normalize, to_tensor, video decode and frame
// sampling) described by a graph spec (proto newtricks.xform.v1.Graph, or its 1:1 JSON
// form), validated completely before any data is touched, and executed the same way on a
// DataNode and on a trainer, so one sample yields bit-identical bytes on both.
//
// # Values
//
// Ops pass a Value along the graph edges. A Value has a Kind: KindBytes (encoded media, the
// sample itself), KindImage (one decoded 8-bit image, HWC interleaved), KindFrames (a stack of
// same-sized decoded video frames in presentation order) or KindTensor (a Tensor with dtype,
// shape and layout, the usual graph output). Tensor data is one little-endian []byte so that
// it can be framed (package frame) and hashed without conversion; typed views are provided.
//
// # Determinism
//
// Ops never touch global state or the wall clock. Every random choice comes from Env.Rand,
// a PCG generator seeded from SHA-256(graph seed, sample key, epoch, node id), so the same
// (graph, sample, epoch) gives the same bytes regardless of GOMAXPROCS, scheduling or host.
// Ops that run work in parallel must combine results in a fixed order.
//
// # Adding an op
//
// An op is one OpDef registered from an init function in its own file (ops_<family>.go):
//
//	func init() {
//		Register(OpDef{
//			Name: "sample_frames",
//			Doc:  "picks frames from a decoded clip",
//			In:   []Kind{KindFrames},          // kinds accepted on the input edge
//			Out:  KindFrames,                  // or KindSame: output kind = input kind
//			Params: []ParamSpec{
//				{Name: "num", Type: ParamInt, Min: 1, Max: 1024, Default: 8},
//				{Name: "mode", Type: ParamString, Enum: []string{"uniform", "stride"}, Default: "uniform"},
//			},
//			Check: func(p Params) error { return nil },          // optional cross-parameter check
//			Infer: func(p Params, in Static) (Static, error) {   // optional static shape inference
//				in.T = int(p.Int("num"))
//				return in, nil
//			},
//			Run: func(ctx context.Context, env *Env, in Value) (Value, error) {
//				n := env.Params.Int("num")
//				off := IntN(env.Rand, 10)  // deterministic per (seed, key, epoch, node)
//				...
//				return Value{Kind: KindFrames, Frames: frames}, nil
//			},
//		})
//	}
//
// Register panics on a duplicate or malformed definition (it runs at init, so a mistake is
// caught by any test). Parameters are checked against ParamSpec (type, range, enum) when a
// graph is compiled; Run can read them with env.Params.Int/Float/Floats/String/Bool without
// re-checking. Draw randomness with Uniform(env.Rand, lo, hi) and IntN(env.Rand, n), which
// use only the PCG stream and so stay stable across Go releases. Errors from Run should wrap a sentinel of this package (ErrDecode,
// ErrUnsupported, ErrLimit, ...) with %w; the graph runner adds the sample key and node id.
// env.Limits carries the configured pixel/frame/output limits an op must enforce before it
// allocates. Leave OpDef.Lazy false: the runner then hands the op materialized values
// (Image, Frames or Tensor set) even when the producer was a fused spatial op.
//
// # Fusion
//
// The spatial ops of this package (crop, center_crop, random_resized_crop, resize, hflip,
// random_hflip) do not touch pixels: they compose an image.Plan on a lazy value. normalize
// and to_tensor then evaluate the plan once, for JPEG straight from libjpeg-turbo's R, G, B
// planes of only the region the plan reads, and write the tensor in the same pass. Results equal the step-by-step semantics
// (torchvision's crop-then-resize with Pillow's antialiased filters) up to float rounding.
package xformgraph
