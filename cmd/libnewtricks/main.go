// Command libnewtricks is the trainer's side of newtricks as a C shared library: the transform
// graphs (package xformgraph), the offload reader (package reader) and the Kerberos client
// (package internal/authn). The Python package (python/, modules newtricks.transforms,
// newtricks.reader and newtricks.auth) loads it with ctypes so that a sample
// transformed on the trainer (the fallback when no DataNode did it) is bit-identical to the
// DataNode's output. Build it with
//
//	go build -buildmode=c-shared -o libnewtricks.so ./cmd/libnewtricks
//
// The C API uses opaque handles and never hands Go memory to C:
//
//	uint64_t ntx_compile(const char *spec, size_t len, char **err);
//	    Compile a graph spec (JSON form, or the binary proto newtricks.xform.v1.Graph).
//	    Returns a handle > 0, or 0 with *err set.
//	int ntx_run(uint64_t graph, const char *key, size_t key_len, uint64_t epoch,
//	            const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, char **err);
//	    Run the graph on one sample. On success (0) *out holds the output frames (package
//	    xformgraph/frame, one per graph output) in memory the caller frees with ntx_free.
//	    On failure returns a status code (see handles.go) and sets *err.
//	int ntx_graph_free(uint64_t graph);   0, or the bad-handle code.
//	void ntx_free(void *p);               Frees *out and *err buffers.
//	char *ntx_domain(void);               The determinism domain string; free with ntx_free.
//	int ntx_graph_count(void);            Live handles (for leak tests).
//
// and the trainer's reader of the offload protocol (reader.go): ntx_reader_open,
// ntx_reader_next, ntx_reader_stats, ntx_reader_info, ntx_reader_close.
//
// Errors are returned per call (the char **err out-parameter), not kept as a process-wide
// "last error": calls may come from several threads at once. Every function is safe for
// concurrent use. The Go runtime inside does not survive fork(): a process must load the
// library after it forks (the Python package enforces this).
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/xformgraph"
)

var table = newGraphs()

func main() {}

// cError stores err's message in *errOut (C memory) when errOut is not NULL.
func cError(errOut **C.char, err error) {
	if errOut != nil {
		*errOut = C.CString(err.Error())
	}
}

// goBytes views C memory as a Go slice without copying; the caller keeps it alive for the
// duration of the call.
func goBytes(p unsafe.Pointer, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(p), int(n))
}

//export ntx_compile
func ntx_compile(spec *C.char, n C.size_t, errOut **C.char) C.uint64_t {
	if spec == nil && n > 0 {
		cError(errOut, fmt.Errorf("%w: NULL spec", errBadArgument))
		return 0
	}
	h, err := table.compile(goBytes(unsafe.Pointer(spec), n))
	if err != nil {
		cError(errOut, err)
		return 0
	}
	return C.uint64_t(h)
}

//export ntx_run
func ntx_run(h C.uint64_t, key *C.char, keyLen C.size_t, epoch C.uint64_t, data *C.uint8_t, n C.size_t,
	out **C.uint8_t, outLen *C.size_t, errOut **C.char) C.int {
	if out == nil || outLen == nil || (data == nil && n > 0) || (key == nil && keyLen > 0) {
		err := fmt.Errorf("%w: NULL pointer", errBadArgument)
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	*out, *outLen = nil, 0
	k := string(goBytes(unsafe.Pointer(key), keyLen))
	frames, size, err := table.run(uint64(h), k, uint64(epoch), goBytes(unsafe.Pointer(data), n))
	if err != nil {
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	buf := C.malloc(C.size_t(size))
	if buf == nil {
		cError(errOut, fmt.Errorf("sample %q: cannot allocate %d bytes for the output", k, size))
		return codeInternal
	}
	if err := writeFrames(unsafe.Slice((*byte)(buf), size), frames); err != nil {
		C.free(buf)
		cError(errOut, fmt.Errorf("sample %q: %w", k, err))
		return codeInternal
	}
	*out, *outLen = (*C.uint8_t)(buf), C.size_t(size)
	return codeOK
}

//export ntx_graph_free
func ntx_graph_free(h C.uint64_t) C.int {
	return C.int(codeOf(table.free(uint64(h))))
}

//export ntx_free
func ntx_free(p unsafe.Pointer) { C.free(p) }

//export ntx_domain
func ntx_domain() *C.char { return C.CString(xformgraph.Domain().String()) }

//export ntx_graph_count
func ntx_graph_count() C.int { return C.int(table.len()) }

//export ntx_reader_open
func ntx_reader_open(cfg *C.char, n C.size_t, errOut **C.char) C.uint64_t {
	if cfg == nil {
		cError(errOut, fmt.Errorf("%w: NULL config", errBadArgument))
		return 0
	}
	h, err := openReaderFromJSON(C.GoBytes(unsafe.Pointer(cfg), C.int(n)))
	if err != nil {
		cError(errOut, err)
		return 0
	}
	return C.uint64_t(h)
}

//export ntx_reader_next
func ntx_reader_next(h C.uint64_t, out **C.uint8_t, outLen *C.size_t, errOut **C.char) C.int {
	if out == nil || outLen == nil {
		err := fmt.Errorf("%w: NULL pointer", errBadArgument)
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	*out, *outLen = nil, 0
	o, err := readerTable.get(uint64(h))
	if err != nil {
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	st, err := o.r.Next(context.Background())
	if errors.Is(err, reader.ErrEnd) {
		return codeEnd
	}
	if err != nil {
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	var p unsafe.Pointer
	buf, err := encodeStep(st, func(n int) []byte {
		if p = C.malloc(C.size_t(n)); p == nil {
			return nil
		}
		return unsafe.Slice((*byte)(p), n)
	})
	if err != nil {
		if p != nil {
			C.free(p)
		}
		cError(errOut, fmt.Errorf("step %d: %w", st.Step, err))
		return codeInternal
	}
	st.Release() // its frames are copied into buf: the reader receives later steps into them
	*out, *outLen = (*C.uint8_t)(p), C.size_t(len(buf))
	return codeOK
}

//export ntx_reader_stats
func ntx_reader_stats(h C.uint64_t) *C.char {
	o, err := readerTable.get(uint64(h))
	if err != nil {
		return nil
	}
	b, err := statsJSON(o.r.Stats())
	if err != nil {
		return nil
	}
	return C.CString(string(b))
}

//export ntx_reader_info
func ntx_reader_info(h C.uint64_t) *C.char {
	o, err := readerTable.get(uint64(h))
	if err != nil {
		return nil
	}
	b, err := infoJSON(o)
	if err != nil {
		return nil
	}
	return C.CString(string(b))
}

//export ntx_reader_close
func ntx_reader_close(h C.uint64_t) C.int {
	return C.int(codeOf(closeReader(uint64(h))))
}

// ntx_nameservice resolves nameservice ns (empty: fs.defaultFS's) from the Hadoop conf dir
// (empty: $HADOOP_CONF_DIR): JSON (nameServiceJSON), or NULL with *err set.
//
//export ntx_nameservice
func ntx_nameservice(confDir, ns *C.char, errOut **C.char) *C.char {
	b, err := nameServiceJSON(C.GoString(confDir), C.GoString(ns))
	if err != nil {
		cError(errOut, err)
		return nil
	}
	return C.CString(string(b))
}
