package mirror

import (
	"crypto/md5"
	"encoding/binary"
	"hash"
	"hash/crc32"
)

// fileChecksum computes HDFS's MD5MD5CRC32C file checksum ("hdfs dfs -checksum", what
// colinmarc/hdfs FileReader.Checksum returns) from the file's bytes as they stream past: a
// CRC32C per bytesPerChecksum chunk, an MD5 of each block's CRCs, and an MD5 of the block MD5s
// zero-padded to a power of two (at least 32 bytes), as colinmarc/hdfs computes it. Equal to
// the source's checksum means the bytes sent are the bytes the source's DataNodes hold.
type fileChecksum struct {
	blockSize, chunk int64
	inBlock, inChunk int64
	crc              uint32
	blockMD5         hash.Hash
	blockSums        []byte
	any              bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newFileChecksum(blockSize, bytesPerChecksum int64) *fileChecksum {
	return &fileChecksum{blockSize: blockSize, chunk: bytesPerChecksum, blockMD5: md5.New()}
}

func (f *fileChecksum) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		f.any = true
		take := min(int64(len(p)), f.chunk-f.inChunk, f.blockSize-f.inBlock)
		f.crc = crc32.Update(f.crc, castagnoli, p[:take])
		f.inChunk += take
		f.inBlock += take
		p = p[take:]
		if f.inChunk == f.chunk || f.inBlock == f.blockSize {
			f.endChunk()
		}
		if f.inBlock == f.blockSize {
			f.endBlock()
		}
	}
	return n, nil
}

func (f *fileChecksum) endChunk() {
	if f.inChunk == 0 {
		return
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], f.crc)
	f.blockMD5.Write(b[:])
	f.crc, f.inChunk = 0, 0
}

func (f *fileChecksum) endBlock() {
	if f.inBlock == 0 {
		return
	}
	f.blockSums = f.blockMD5.Sum(f.blockSums)
	f.blockMD5.Reset()
	f.inBlock = 0
}

// addChunk adds the CRC of the next chunk of n bytes (bytesPerChecksum, less for a file's last
// chunk), computed elsewhere (a range copied in parallel). Pending bytes must not be mixed in.
func (f *fileChecksum) addChunk(crc uint32, n int64) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc)
	f.blockMD5.Write(b[:])
	f.inBlock += n
	if f.inBlock >= f.blockSize {
		f.endBlock()
	}
}

// Sum finishes the checksum.
func (f *fileChecksum) Sum() []byte {
	f.endChunk()
	f.endBlock()
	padded := 32
	for padded < len(f.blockSums) {
		padded *= 2
	}
	h := md5.New()
	h.Write(f.blockSums)
	h.Write(make([]byte, padded-len(f.blockSums)))
	return h.Sum(nil)
}
