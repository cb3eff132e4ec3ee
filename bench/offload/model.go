package main

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static double nt_thread_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// The model step: C = A x B for fixed n x n float32 matrices, blocked (64 x 64 tiles, the
// i-k-j order a compiler vectorises), single-threaded. With n = 512 the three matrices are
// 3 MiB, more than the core's L2, so a step streams memory through the caches as a real
// model's GEMMs do, not registers only; the work per step is fixed, its time is what the core
// gives it.
static float *nt_a, *nt_b, *nt_c;
static int nt_n;

static float nt_init_a(int i, int j) { return (float)((i * 7 + j * 3) % 13 - 6) / 8.0f; }
static float nt_init_b(int i, int j) { return (float)((i * 5 + j * 11) % 9 - 4) / 8.0f; }

// nt_gemm_init allocates and fills the matrices (0 on success).
static int nt_gemm_init(int n) {
	if (nt_a != 0) return nt_n == n ? 0 : -1;
	size_t sz = (size_t)n * (size_t)n * sizeof(float);
	if (posix_memalign((void **)&nt_a, 64, sz) || posix_memalign((void **)&nt_b, 64, sz) || posix_memalign((void **)&nt_c, 64, sz)) return -1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			nt_a[i * n + j] = nt_init_a(i, j);
			nt_b[i * n + j] = nt_init_b(i, j);
		}
	nt_n = n;
	return 0;
}

static void nt_gemm(void) {
	const int n = nt_n, bs = 64;
	memset(nt_c, 0, (size_t)n * (size_t)n * sizeof(float));
	for (int ii = 0; ii < n; ii += bs)
		for (int kk = 0; kk < n; kk += bs)
			for (int jj = 0; jj < n; jj += bs) {
				int ie = ii + bs < n ? ii + bs : n, ke = kk + bs < n ? kk + bs : n, je = jj + bs < n ? jj + bs : n;
				for (int i = ii; i < ie; i++) {
					float *c = nt_c + (size_t)i * n;
					for (int k = kk; k < ke; k++) {
						const float a = nt_a[(size_t)i * n + k];
						const float *b = nt_b + (size_t)k * n;
						for (int j = jj; j < je; j++) c[j] += a * b[j];
					}
				}
			}
}

static float nt_gemm_c(int i, int j) { return nt_c[(size_t)i * nt_n + j]; }

// The model thread: a thread the Go runtime does not know, as a training framework's own
// thread is. It waits on start_fd, runs one GEMM, stores the CPU it used and signals done_fd
// (non-blocking, so Go waits for it in its network poller).
static int nt_start_fd = -1, nt_done_fd = -1;
static int64_t nt_used_ns; // CPU the last step used, nanoseconds

static void *nt_model_thread(void *arg) {
	(void)arg;
	for (;;) {
		uint64_t v;
		if (read(nt_start_fd, &v, sizeof v) != sizeof v) continue;
		double t0 = nt_thread_cpu();
		nt_gemm();
		__atomic_store_n(&nt_used_ns, (int64_t)((nt_thread_cpu() - t0) * 1e9), __ATOMIC_RELEASE);
		v = 1;
		while (write(nt_done_fd, &v, sizeof v) != sizeof v) {}
	}
	return 0;
}

// nt_model_thread_start starts the model thread and returns the fd to wait on, or -1.
static int nt_model_thread_start(void) {
	nt_start_fd = eventfd(0, EFD_CLOEXEC);
	nt_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nt_start_fd < 0 || nt_done_fd < 0) return -1;
	pthread_t t;
	if (pthread_create(&t, 0, nt_model_thread, 0) != 0) return -1;
	pthread_detach(t);
	return nt_done_fd;
}

static int nt_model_thread_go(void) {
	uint64_t v = 1;
	return write(nt_start_fd, &v, sizeof v) == sizeof v ? 0 : -1;
}

static double nt_model_thread_used(void) { return (double)__atomic_load_n(&nt_used_ns, __ATOMIC_ACQUIRE) / 1e9; }
*/
import "C"

import (
	"fmt"
	"os"
)

// gemmInit sets up the model step's n x n matrices (once per process, one size).
func gemmInit(n int) error {
	if n < 1 || n > 4096 {
		return fmt.Errorf("model GEMM size %d: want 1 to 4096", n)
	}
	if C.nt_gemm_init(C.int(n)) != 0 {
		return fmt.Errorf("model GEMM %d x %d: allocation failed (or another size already set up)", n, n)
	}
	return nil
}

// modelStep runs one model step (the GEMM) in C, in a cgo call from a locked Go thread
// (-model-runs cgo). While the call runs the Go runtime counts that thread as in a system call
// holding its P, and its monitor thread (sysmon) takes the P back and polls every 20 us for a
// while after: CPU on another thread that is not data loading.
func modelStep() { C.nt_gemm() }

// gemmC is element (i, j) of the last product the C model step computed.
func gemmC(i, j int) float32 { return float32(C.nt_gemm_c(C.int(i), C.int(j))) }

// modelThread runs the model step on a C thread the Go runtime does not know (-model-runs
// thread, the default), as a training framework runs its model on its own threads (a Python
// trainer with the reader in libnewtricks): the training loop hands a step to it and waits
// without holding a thread in a system call.
type modelThread struct {
	done *os.File
}

func startModelThread() (*modelThread, error) {
	fd := C.nt_model_thread_start()
	if fd < 0 {
		return nil, fmt.Errorf("model thread: eventfd or pthread_create failed")
	}
	return &modelThread{done: os.NewFile(uintptr(fd), "model-done")}, nil
}

// step runs one model step (gemmInit first) on the model thread and returns the CPU it used.
func (m *modelThread) step() (float64, error) {
	if C.nt_model_thread_go() != 0 {
		return 0, fmt.Errorf("model thread: start signal failed")
	}
	var b [8]byte
	if _, err := m.done.Read(b[:]); err != nil {
		return 0, fmt.Errorf("model thread: %w", err)
	}
	return float64(C.nt_model_thread_used()), nil
}

// goGEMM is the model step as Go code (-model-runs go): the same blocked product on Go slices.
type goGEMM struct {
	n       int
	a, b, c []float32
}

func newGoGEMM(n int) *goGEMM {
	g := &goGEMM{n: n, a: make([]float32, n*n), b: make([]float32, n*n), c: make([]float32, n*n)}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.a[i*n+j] = float32((i*7+j*3)%13-6) / 8
			g.b[i*n+j] = float32((i*5+j*11)%9-4) / 8
		}
	}
	return g
}

func (g *goGEMM) step() {
	n, bs := g.n, 64
	clear(g.c)
	for ii := 0; ii < n; ii += bs {
		for kk := 0; kk < n; kk += bs {
			for jj := 0; jj < n; jj += bs {
				ie, ke, je := min(ii+bs, n), min(kk+bs, n), min(jj+bs, n)
				for i := ii; i < ie; i++ {
					c := g.c[i*n+jj : i*n+je]
					for k := kk; k < ke; k++ {
						a := g.a[i*n+k]
						b := g.b[k*n+jj : k*n+je]
						for j := range c {
							c[j] += a * b[j]
						}
					}
				}
			}
		}
	}
}
