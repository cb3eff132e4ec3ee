# xformgraph video: FFmpeg binding and video decode (xformgraph/ffmpeg, xformgraph/video,
# ops_video.go). Media come from xformgraph/testdata/gen-video.sh via `make xform-media`
# (mk/xform.mk); the bench builds its own 720p clip into the same directory.

.PHONY: xform-video-test
xform-video-test: xform-media ## video/FFmpeg tests against ffmpeg CLI references, bad input, RSS leak
	NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) go test ./xformgraph/ffmpeg/ ./xformgraph/video/ \
	  -run . && NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) go test ./xformgraph/ -run 'Video|RandomSegment'

.PHONY: bench-xform-video
bench-xform-video: xform-media ## video benchmark only: clips/s vs decord/PyAV, decode fps vs ffmpeg; last line RESULT ...
	XFORM_MEDIA=$(XFORM_MEDIA) BENCH_VENV=$(BENCH_VENV) bench/xform/video.sh
