// Package dataset is the sample index of a training dataset stored in HDFS: for every sample
// key, the file it lives in, its byte range, its media type, its geometry and an estimated
// transform cost. A dataset is a directory of WebDataset-style tar shards (members
// "<key>.<ext>", one media member per key) and/or plain files (one file per sample).
//
// Build walks the directory once, reading every file sequentially (tar members are located
// by their header offsets, media headers are probed without decoding pixels), and the index
// is stored beside the shards as "_newtricks_index.pb" (proto newtricks.v1.DatasetIndex).
// Trainers and DataNodes load the same bytes and check them by SHA-256.
package dataset
