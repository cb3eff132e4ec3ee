package datasets

import (
	"context"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/hdfsio"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Upload writes m in layout l under the local directory, uploads the files to remote in HDFS
// and stores their index beside them (what `newtricks dataset index` does); it returns the
// index and its SHA-256.
func Upload(ctx context.Context, fs *hdfs.Client, local, remote string, m Media, l Layout) (*pb.DatasetIndex, []byte, error) {
	if _, err := Write(local, m, l); err != nil {
		return nil, nil, err
	}
	return UploadLocal(ctx, fs, local, remote)
}

// UploadLocal uploads the files of the local directory (a dataset already written, such as
// WriteRealistic's) to remote in HDFS and stores their index beside them; it returns the index
// and its SHA-256.
func UploadLocal(ctx context.Context, fs *hdfs.Client, local, remote string) (*pb.DatasetIndex, []byte, error) {
	if err := hdfsio.UploadDir(ctx, fs, local, remote); err != nil {
		return nil, nil, err
	}
	idx, err := dataset.Build(ctx, dataset.HDFSFS{Client: fs}, remote, dataset.BuildOptions{})
	if err != nil {
		return nil, nil, err
	}
	sum, err := dataset.Store(ctx, fs, idx)
	if err != nil {
		return nil, nil, err
	}
	return idx, sum, nil
}
