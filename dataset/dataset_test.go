package dataset_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	keys, err := datasets.Write(dir, m, datasets.Layout{Shards: 2, PerShard: 5, Singles: 3, VideoEvery: 4, Captions: true})
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
	// Every sample's byte range holds its members: the media member is a media item, the
	// others the label, caption and metadata the harness wrote.
	videos := 0
	if ix.Version() != dataset.Version {
		t.Errorf("index version %d, want %d", ix.Version(), dataset.Version)
	}
	for i := 0; i < ix.Len(); i++ {
		s := ix.Sample(i)
		f := ix.Files()[s.GetFile()]
		data, err := os.ReadFile(filepath.Join(dir, f.GetPath()))
		if err != nil {
			t.Fatal(err)
		}
		got, members, err := ix.Split(i, data[s.GetOffset():s.GetOffset()+s.GetLength()])
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		meta := map[string]string{}
		for _, mb := range members {
			names = append(names, mb.Name)
			if !mb.IsMedia() {
				meta[mb.Name] = string(mb.Data)
			}
		}
		if f.GetTar() {
			var shard, j int
			fmt.Sscanf(s.GetKey(), "s%03d/%06d", &shard, &j)
			ext := names[1]
			want := []string{"cls", ext, "json", "txt"}
			if !slices.Equal(names, want) {
				t.Errorf("sample %q: members %v, want %v", s.GetKey(), names, want)
			}
			if meta["cls"] != fmt.Sprint(datasets.Label(j)) || meta["txt"] != datasets.Caption(s.GetKey(), j) || meta["json"] != datasets.Meta(s.GetKey(), shard, j, ext) {
				t.Errorf("sample %q: members %q", s.GetKey(), meta)
			}
		} else if len(names) != 1 || names[0] != filepath.Ext(f.GetPath())[1:] {
			t.Errorf("single file %q: members %v", f.GetPath(), names)
		}
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
		"members of a key not consecutive": func(dir string) {
			writeTar(t, filepath.Join(dir, "a.tar"), "k.jpg", m.Images[0].Data, "j.jpg", m.Images[0].Data, "k.cls", []byte("1"))
		},
		"a member twice": func(dir string) {
			writeTar(t, filepath.Join(dir, "a.tar"), "k.jpg", m.Images[0].Data, "k.cls", []byte("1"), "k.cls", []byte("2"))
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

func writeTar(t *testing.T, p string, kv ...any) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i := 0; i < len(kv); i += 2 {
		data := kv[i+1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: kv[i].(string), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKeysWithoutMediaAreNotSamples: a key with only a label is skipped, as before members
// were indexed; two media members are one sample whose primary (the graph's "input") is the
// first, with the cost of both.
func TestKeysWithoutMediaAreNotSamples(t *testing.T) {
	m := media(t)
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "a.tar"), "a.cls", []byte("1"), "b.left.jpg", m.Images[0].Data, "b.right.jpg", m.Images[1].Data, "b.json", []byte("{}"))
	idx, err := dataset.Build(context.Background(), dataset.DirFS{Local: dir}, "/d", dataset.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.GetSamples()) != 1 || idx.GetSamples()[0].GetKey() != "b" {
		t.Fatalf("samples %v", idx.GetSamples())
	}
	s := idx.GetSamples()[0]
	if len(s.GetMembers()) != 3 || s.GetMembers()[0].GetName() != "left.jpg" || s.GetMembers()[1].GetName() != "right.jpg" {
		t.Fatalf("members %v", s.GetMembers())
	}
	if s.GetWidth() == 0 || s.GetCost() <= int64(s.GetWidth())*int64(s.GetHeight()) {
		t.Errorf("cost %d of %dx%d: want both images' pixels", s.GetCost(), s.GetWidth(), s.GetHeight())
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
		"version":   func(m *pb.DatasetIndex) { m.Version = 3 },
		"version 0": func(m *pb.DatasetIndex) { m.Version = 0 },
		"v1 members": func(m *pb.DatasetIndex) {
			m.Samples[0].Members = []*pb.DatasetMember{{Name: "jpg", Offset: 10, Length: 20, Media: 1}}
		},
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

// TestParseMembers: a version 2 index (members) read from a file any writer of the dataset
// directory made: every member must lie inside its sample (hence its file), names are bounded
// and unique, members per sample are bounded, and the sample's media is its first media
// member's. A version 1 index still loads (its sample is its one media member) and says
// what a newer one would need when it is too new.
func TestParseMembers(t *testing.T) {
	good := func() *pb.DatasetIndex {
		return &pb.DatasetIndex{Version: 2, Root: "/d",
			Files: []*pb.DatasetFile{{Path: "a.tar", Length: 100, Tar: true}},
			Samples: []*pb.DatasetSample{{Key: "k", File: 0, Offset: 10, Length: 50, Cost: 1, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG,
				Members: []*pb.DatasetMember{{Name: "cls", Offset: 10, Length: 1}, {Name: "jpg", Offset: 523 - 512, Length: 30, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG},
					{Name: "txt", Offset: 59, Length: 1}}}}}
	}
	ix, err := dataset.FromProto(good())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("C" + strings.Repeat("j", 30) + strings.Repeat("-", 18) + "T")
	primary, ms, err := ix.Split(0, data)
	if err != nil || string(primary) != strings.Repeat("j", 30) || len(ms) != 3 || string(ms[0].Data) != "C" || string(ms[2].Data) != "T" || ms[0].IsMedia() || !ms[1].IsMedia() {
		t.Fatalf("Split: %q %v %v", primary, ms, err)
	}
	if _, _, err := ix.Split(0, data[:10]); err == nil {
		t.Error("Split of a short buffer: no error")
	}
	many := make([]*pb.DatasetMember, dataset.MaxMembers+1)
	for i := range many {
		many[i] = &pb.DatasetMember{Name: fmt.Sprintf("m%d", i), Offset: 10, Length: 0, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG}
	}
	cases := map[string]func(m *pb.DatasetIndex){
		"member before the sample": func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Offset = 9 },
		"member past the sample":   func(m *pb.DatasetIndex) { m.Samples[0].Members[2].Length = 2 },
		"member length -1":         func(m *pb.DatasetIndex) { m.Samples[0].Members[2].Length = -1 },
		"member 2^62 overflowing": func(m *pb.DatasetIndex) {
			m.Samples[0].Members[2].Offset, m.Samples[0].Members[2].Length = 1<<62, 1<<62
		},
		"member huge length":         func(m *pb.DatasetIndex) { m.Samples[0].Members[2].Length = 1<<63 - 1 },
		"no members":                 func(m *pb.DatasetIndex) { m.Samples[0].Members = nil },
		"too many members":           func(m *pb.DatasetIndex) { m.Samples[0].Members = many },
		"empty name":                 func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Name = "" },
		"long name":                  func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Name = strings.Repeat("x", dataset.MaxMemberName+1) },
		"name with slash":            func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Name = "a/b" },
		"name with NUL":              func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Name = "a\x00" },
		"duplicate name":             func(m *pb.DatasetIndex) { m.Samples[0].Members[2].Name = "cls" },
		"no media member":            func(m *pb.DatasetIndex) { m.Samples[0].Members[1].Media = 0 },
		"media differs from primary": func(m *pb.DatasetIndex) { m.Samples[0].Members[1].Media = pb.DatasetMedia_DATASET_MEDIA_PNG },
		"unknown media":              func(m *pb.DatasetIndex) { m.Samples[0].Members[0].Media = 99 },
	}
	for name, edit := range cases {
		m := good()
		edit(m)
		_, err := dataset.FromProto(m)
		if !errors.Is(err, dataset.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	m := good()
	m.Version = 3
	if _, err := dataset.FromProto(m); err == nil || !strings.Contains(err.Error(), "rebuild the index") {
		t.Errorf("version 3: %v, want a rebuild hint", err)
	}
	// Version 1: no members, the sample is its media bytes.
	v1 := &pb.DatasetIndex{Version: 1, Root: "/d", Files: []*pb.DatasetFile{{Path: "a.jpg", Length: 100}},
		Samples: []*pb.DatasetSample{{Key: "a", Offset: 0, Length: 100, Cost: 1, Media: pb.DatasetMedia_DATASET_MEDIA_JPEG}}}
	ix1, err := dataset.FromProto(v1)
	if err != nil {
		t.Fatal(err)
	}
	p1, ms1, err := ix1.Split(0, make([]byte, 100))
	if err != nil || len(p1) != 100 || len(ms1) != 1 || ms1[0].Name != "" || ix1.MemberNames(0) != nil {
		t.Errorf("v1 Split: %d bytes, %v, %v", len(p1), ms1, err)
	}
}
