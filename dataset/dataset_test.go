package dataset_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/harness/datasets"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

func media(t *testing.T) datasets.Media {
	t.Helper()
	m, err := datasets.LoadMedia(os.Getenv("NEWTRICKS_XFORM_MEDIA"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildTarAndSingles(t *testing.T) {
	dir := t.TempDir()
	m := media(t)
	keys, err := datasets.Write(dir, m, datasets.Layout{Shards: 2, PerShard: 5, Singles: 3, VideoEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	now := time.UnixMilli(1700000000000)
	idx, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/data/ds", dataset.BuildOptions{
		Progress: func(f, tf int, b, tb int64) { calls++ },
		Now:      func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := dataset.FromProto(idx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Keys(); !slices.Equal(got, keys) {
		t.Fatalf("keys %v, want %v", got, keys)
	}
	if calls != 2+3 {
		t.Errorf("progress called %d times, want 5 (one per file)", calls)
	}
	// Every sample's byte range holds exactly the member it names.
	videos := 0
	for i := 0; i < ix.Len(); i++ {
		s := ix.Sample(i)
		f := ix.Files()[s.GetFile()]
		data, err := os.ReadFile(filepath.Join(dir, f.GetPath()))
		if err != nil {
			t.Fatal(err)
		}
		got := data[s.GetOffset() : s.GetOffset()+s.GetLength()]
		found := false
		for _, it := range append(append([]datasets.Item{}, m.Images...), m.Videos...) {
			if bytes.Equal(it.Data, got) {
				found = true
			}
		}
		if !found {
			t.Errorf("sample %q: bytes [%d,+%d) of %s are not a media item", s.GetKey(), s.GetOffset(), s.GetLength(), f.GetPath())
		}
		if s.GetWidth() == 0 || s.GetHeight() == 0 || s.GetFrames() == 0 || s.GetCost() != int64(s.GetWidth())*int64(s.GetHeight())*int64(s.GetFrames()) {
			t.Errorf("sample %q: geometry %dx%dx%d cost %d", s.GetKey(), s.GetWidth(), s.GetHeight(), s.GetFrames(), s.GetCost())
		}
		if s.GetMedia() == pb.DatasetMedia_DATASET_MEDIA_VIDEO {
			videos++
			if s.GetFrames() < 2 {
				t.Errorf("clip %q: %d frames", s.GetKey(), s.GetFrames())
			}
		}
	}
	if videos == 0 {
		t.Error("no video samples indexed")
	}
	// Deterministic: the same tree gives the same bytes and SHA-256.
	idx2, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/data/ds", dataset.BuildOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := dataset.Marshal(idx)
	b2, _ := dataset.Marshal(idx2)
	if !bytes.Equal(b1, b2) {
		t.Error("two builds of one tree differ")
	}
	ix2, err := dataset.Parse(b1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ix2.SHA256(), ix.SHA256()) {
		t.Error("Parse and FromProto disagree on the SHA-256")
	}
}

func TestBuildRejects(t *testing.T) {
	m := media(t)
	cases := map[string]func(dir string){
		"empty directory": func(dir string) {},
		"corrupt tar": func(dir string) {
			os.WriteFile(filepath.Join(dir, "bad.tar"), bytes.Repeat([]byte("x"), 1000), 0o644)
		},
		"duplicate key across files": func(dir string) {
			os.WriteFile(filepath.Join(dir, "a.jpg"), m.Images[0].Data, 0o644)
			os.WriteFile(filepath.Join(dir, "a.png"), m.Images[0].Data, 0o644)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			mk(dir)
			_, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/d", dataset.BuildOptions{})
			if !errors.Is(err, dataset.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			t.Log(err)
		})
	}
}

func TestCorruptSampleIsIndexed(t *testing.T) {
	dir := t.TempDir()
	_, err := datasets.Write(dir, media(t), datasets.Layout{Shards: 1, PerShard: 3, Corrupt: map[string]bool{"s000/000001": true}})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/d", dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := idx.GetSamples()[1].GetCost(); c != 1 {
		t.Errorf("corrupt sample cost %d, want 1", c)
	}
}

func TestParseRejects(t *testing.T) {
	good := func() *pb.DatasetIndex {
		return &pb.DatasetIndex{Version: 1, Root: "/d",
			Files:   []*pb.DatasetFile{{Path: "a.tar", Length: 100, Tar: true}},
			Samples: []*pb.DatasetSample{{Key: "k", File: 0, Offset: 10, Length: 20, Cost: 1}}}
	}
	cases := map[string]func(m *pb.DatasetIndex){
		"version":       func(m *pb.DatasetIndex) { m.Version = 2 },
		"relative root": func(m *pb.DatasetIndex) { m.Root = "d" },
		"escaping path": func(m *pb.DatasetIndex) { m.Files[0].Path = "../etc/passwd" },
		"range":         func(m *pb.DatasetIndex) { m.Samples[0].Length = 91 },
		"file":          func(m *pb.DatasetIndex) { m.Samples[0].File = 1 },
		"dup key":       func(m *pb.DatasetIndex) { m.Samples = append(m.Samples, m.Samples[0]) },
		"no samples":    func(m *pb.DatasetIndex) { m.Samples = nil },
		"cost":          func(m *pb.DatasetIndex) { m.Samples[0].Cost = 0 },
	}
	if _, err := dataset.FromProto(good()); err != nil {
		t.Fatal(err)
	}
	for name, edit := range cases {
		m := good()
		edit(m)
		if _, err := dataset.FromProto(m); !errors.Is(err, dataset.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := dataset.Parse([]byte("\xff\xff\xff")); !errors.Is(err, dataset.ErrInvalid) {
		t.Errorf("garbage: %v", err)
	}
}
