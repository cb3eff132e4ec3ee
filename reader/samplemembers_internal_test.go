package reader

import (
	"errors"
	"testing"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// The members a node sends with tensors must be the index's non-media members, in order, of
// the index's lengths: a node cannot add, drop, rename or resize one.
func TestMatchMembers(t *testing.T) {
	jpg := pb.DatasetMedia_DATASET_MEDIA_JPEG
	ix, err := dataset.FromProto(&pb.DatasetIndex{Version: dataset.Version, Root: "/d",
		Files: []*pb.DatasetFile{{Path: "a.tar", Length: 4096}},
		Samples: []*pb.DatasetSample{{Key: "k", File: 0, Offset: 512, Length: 2048, Media: jpg, Cost: 1, Members: []*pb.DatasetMember{
			{Name: "cls", Offset: 512, Length: 1}, {Name: "jpg", Offset: 1024, Length: 500, Media: jpg},
			{Name: "txt", Offset: 2048, Length: 3}, {Name: "right.jpg", Offset: 2400, Length: 100, Media: jpg}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := primaryName(ix.Sample(0)); got != "jpg" {
		t.Errorf("primary %q", got)
	}
	good := []*pb.SampleMember{{Name: "cls", Data: []byte("3")}, {Name: "txt", Data: []byte("abc")}}
	if err := matchMembers(ix, 0, good); err != nil {
		t.Fatalf("the index's members refused: %v", err)
	}
	for name, bad := range map[string][]*pb.SampleMember{
		"none":      nil,
		"one":       good[:1],
		"extra":     append(append([]*pb.SampleMember{}, good...), &pb.SampleMember{Name: "json", Data: []byte("{}")}),
		"renamed":   {{Name: "cls", Data: []byte("3")}, {Name: "TXT", Data: []byte("abc")}},
		"resized":   {{Name: "cls", Data: []byte("33")}, {Name: "txt", Data: []byte("abc")}},
		"reordered": {good[1], good[0]},
		"media":     {{Name: "cls", Data: []byte("3")}, {Name: "jpg", Data: make([]byte, 500)}, {Name: "txt", Data: []byte("abc")}},
	} {
		if err := matchMembers(ix, 0, bad); !errors.Is(err, frame.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
