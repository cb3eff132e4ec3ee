package golden

import "fmt"

// graphs are the golden graphs, JSON form; "SEED" is replaced by the case's seed. Between
// them they use every image and video op, every dtype and layout, every resize filter, the
// fused JPEG path and the step-by-step path.
var graphs = map[string]string{
	// The training pipeline: fused random_resized_crop -> flip -> normalize -> CHW float32.
	"imagenet": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"rrc","op":"random_resized_crop","input":"d","params":{"size":[224]}},
	  {"id":"f","op":"random_hflip","input":"rrc"},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}},
	  {"id":"t","op":"to_tensor","input":"n","params":{"layout":"CHW","dtype":"float32"}}],
	 "outputs":["t"]}`,
	// The same with bfloat16 output and a bicubic resample.
	"imagenet_bf16": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"rrc","op":"random_resized_crop","input":"d","params":{"size":[160,192],"filter":"bicubic"}},
	  {"id":"f","op":"random_hflip","input":"rrc"},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.5],"std":[0.5]}},
	  {"id":"t","op":"to_tensor","input":"n","params":{"layout":"CHW","dtype":"bfloat16"}}],
	 "outputs":["t"]}`,
	// Evaluation: resize the shorter side, center crop; three outputs of three dtypes.
	"eval": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"r","op":"resize","input":"d","params":{"size":[144],"filter":"bicubic"}},
	  {"id":"c","op":"center_crop","input":"r","params":{"size":[128]}},
	  {"id":"u8","op":"to_tensor","input":"c","params":{"layout":"CHW","dtype":"uint8"}},
	  {"id":"h","op":"to_tensor","input":"c","params":{"layout":"HWC","dtype":"float16"}},
	  {"id":"n","op":"normalize","input":"c","params":{"mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}}],
	 "outputs":["u8","h","n"]}`,
	// The same without DCT-domain scaling (JPEG decoded at full size, as torchvision).
	"eval_fullsize": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input","params":{"dct_scale":false}},
	  {"id":"r","op":"resize","input":"d","params":{"size":[144],"filter":"bicubic"}},
	  {"id":"c","op":"center_crop","input":"r","params":{"size":[128]}},
	  {"id":"u8","op":"to_tensor","input":"c","params":{"layout":"CHW","dtype":"uint8"}}],
	 "outputs":["u8"]}`,
	// Gray decode, area filter, non-square crop.
	"gray": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input","params":{"mode":"gray"}},
	  {"id":"rrc","op":"random_resized_crop","input":"d","params":{"size":[64,96],"scale":[0.2,0.9],"filter":"area"}},
	  {"id":"n","op":"normalize","input":"rrc","params":{"mean":[0.5],"std":[0.25]}}],
	 "outputs":["n"]}`,
	// RGBA decode, bilinear resize to a fixed size, random flip, HWC uint8.
	"rgba": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input","params":{"mode":"rgba"}},
	  {"id":"r","op":"resize","input":"d","params":{"size":[96,128],"filter":"bilinear"}},
	  {"id":"f","op":"random_hflip","input":"r","params":{"p":0.5}},
	  {"id":"t","op":"to_tensor","input":"f","params":{"layout":"HWC","dtype":"uint8"}}],
	 "outputs":["t"]}`,
	// A fixed crop, nearest-neighbour upscale, flip, without EXIF orientation.
	"crop": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"d","op":"decode_image","input":"input","params":{"orientation":false}},
	  {"id":"c","op":"crop","input":"d","params":{"x":17,"y":9,"width":101,"height":77}},
	  {"id":"r","op":"resize","input":"c","params":{"size":[150,200],"filter":"nearest"}},
	  {"id":"f","op":"hflip","input":"r"},
	  {"id":"t","op":"to_tensor","input":"f","params":{"layout":"CHW","dtype":"float32"}}],
	 "outputs":["t"]}`,
	// Video, sampling and resize fused into the decode.
	"video_uniform": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"v","op":"decode_video","input":"input","params":{"mode":"uniform","num":4,"width":48,"height":40}},
	  {"id":"t","op":"to_tensor","input":"v","params":{"layout":"TCHW","dtype":"uint8"}}],
	 "outputs":["t"]}`,
	// Video, op per step: random segment, random crop, normalize, float16.
	"video_segment": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"v","op":"decode_video","input":"input"},
	  {"id":"s","op":"sample_frames","input":"v","params":{"mode":"random_segment","num":4,"stride":2}},
	  {"id":"rrc","op":"random_resized_crop","input":"s","params":{"size":[24]}},
	  {"id":"f","op":"random_hflip","input":"rrc"},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.45],"std":[0.225]}},
	  {"id":"t","op":"to_tensor","input":"n","params":{"layout":"TCHW","dtype":"float16"}}],
	 "outputs":["t"]}`,
	// Video by timestamps, native size, THWC.
	"video_timestamps": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"v","op":"decode_video","input":"input","params":{"mode":"timestamps","timestamps":[0,0.5,1.04,2.2]}},
	  {"id":"t","op":"to_tensor","input":"v","params":{"layout":"THWC","dtype":"uint8"}}],
	 "outputs":["t"]}`,
	// Video, stride sampling after a full decode, bicubic resize.
	"video_stride": `{"version":1,"seed":"SEED","nodes":[
	  {"id":"v","op":"decode_video","input":"input"},
	  {"id":"s","op":"sample_frames","input":"v","params":{"mode":"stride","stride":5,"start":3,"num":6}},
	  {"id":"r","op":"resize","input":"s","params":{"size":[36,44],"filter":"bicubic"}},
	  {"id":"t","op":"to_tensor","input":"r","params":{"layout":"TCHW","dtype":"float32"}}],
	 "outputs":["t"]}`,
}

// runs lists (graph, sample, seed, epochs...) groups.
var runs = []struct {
	graph, sample string
	seed          uint64
	epochs        []uint64
}{
	{"imagenet", "photo_420.jpg", 42, []uint64{0, 1, 2}},
	{"imagenet", "photo_420.jpg", 7, []uint64{0, 5, 1000000007}},
	{"imagenet", "exif_orient6.jpg", 42, []uint64{0, 1}},
	{"imagenet", "ffmpeg_420.jpg", 42, []uint64{0}},
	{"imagenet", "small_444.jpg", 42, []uint64{0}},
	{"imagenet", "small_422.jpg", 42, []uint64{0}},
	{"imagenet", "small_progressive.jpg", 42, []uint64{0, 1}},
	{"imagenet", "small_gray.jpg", 42, []uint64{0}},
	{"imagenet", "small_cmyk.jpg", 42, []uint64{0}},
	{"imagenet", "small_lossy.webp", 42, []uint64{0}},
	{"imagenet", "small_palette.png", 42, []uint64{0}},
	{"imagenet", "small_rgba.png", 42, []uint64{0}},
	{"imagenet_bf16", "photo_420.jpg", 3, []uint64{0}},
	{"imagenet_bf16", "small_444.jpg", 3, []uint64{0}},
	{"eval", "photo_420.jpg", 0, []uint64{0}},
	{"eval", "exif_orient6.jpg", 0, []uint64{0}},
	{"eval", "ffmpeg_420.jpg", 0, []uint64{0}},
	{"eval", "small_progressive.jpg", 0, []uint64{0}},
	{"eval", "small_gray.jpg", 0, []uint64{0}},
	{"eval", "small_cmyk.jpg", 0, []uint64{0}},
	{"eval", "small_rgba.png", 0, []uint64{0}},
	{"eval", "small_lossy.webp", 0, []uint64{0}},
	{"eval_fullsize", "photo_420.jpg", 0, []uint64{0}},
	{"eval_fullsize", "small_progressive.jpg", 0, []uint64{0}},
	{"gray", "photo_420.jpg", 9, []uint64{0, 1}},
	{"gray", "small_444.jpg", 9, []uint64{0}},
	{"gray", "small_palette.png", 9, []uint64{0}},
	{"rgba", "small_rgba.png", 11, []uint64{0, 1}},
	{"rgba", "small_lossy.webp", 11, []uint64{0}},
	{"rgba", "photo_420.jpg", 11, []uint64{0}},
	{"crop", "photo_420.jpg", 0, []uint64{0}},
	{"crop", "small_422.jpg", 0, []uint64{0}},
	{"crop", "exif_orient6.jpg", 0, []uint64{0}},
	{"video_uniform", "tiny.mp4", 0, []uint64{0}},
	{"video_uniform", "tiny_vp9.webm", 0, []uint64{0}},
	{"video_uniform", "tiny_hevc10.mkv", 0, []uint64{0}},
	{"video_uniform", "h264_bframes.mp4", 0, []uint64{0}},
	{"video_uniform", "tiny_mpeg4.mp4", 0, []uint64{0}},
	{"video_segment", "h264_bframes.mp4", 5, []uint64{0, 1, 2}},
	{"video_segment", "tiny.mp4", 5, []uint64{0}},
	{"video_segment", "tiny_vp9.webm", 5, []uint64{0}},
	{"video_segment", "tiny_hevc10.mkv", 5, []uint64{0}},
	{"video_segment", "tiny_mpeg4.mp4", 5, []uint64{0}},
	{"video_timestamps", "h264_bframes.mp4", 0, []uint64{0}},
	{"video_stride", "h264_bframes.mp4", 0, []uint64{0}},
}

// caseList expands runs into cases, in order.
func caseList() []Case {
	var out []Case
	for _, r := range runs {
		if _, ok := graphs[r.graph]; !ok {
			panic("golden: no graph " + r.graph)
		}
		for _, e := range r.epochs {
			out = append(out, Case{
				ID:        fmt.Sprintf("%s/%s/s%d/e%d", r.graph, r.sample, r.seed, e),
				GraphName: r.graph, Sample: r.sample, Key: r.sample, Seed: r.seed, Epoch: e,
			})
		}
	}
	return out
}
