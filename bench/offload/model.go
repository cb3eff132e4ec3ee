package main

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static double nt_thread_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// A fixed amount of work on the calling thread: a compute loop until it used `seconds` of CPU.
static void nt_model_step(double seconds) {
	double end = nt_thread_cpu() + seconds;
	volatile unsigned long x = 0;
	while (nt_thread_cpu() < end) {
		for (int k = 0; k < 10000; k++) x += k;
	}
}

// The model thread: a thread the Go runtime does not know, as a training framework's own
// thread is. It waits on start_fd, runs one step of nt_ns, stores the CPU it used and
// signals done_fd (non-blocking, so Go waits for it in its network poller).
static int nt_start_fd = -1, nt_done_fd = -1;
static int64_t nt_ns, nt_used_ns; // step length and CPU used, nanoseconds

static void *nt_model_thread(void *arg) {
	(void)arg;
	for (;;) {
		uint64_t v;
		if (read(nt_start_fd, &v, sizeof v) != sizeof v) continue;
		double t0 = nt_thread_cpu();
		nt_model_step((double)__atomic_load_n(&nt_ns, __ATOMIC_ACQUIRE) / 1e9);
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

static int nt_model_thread_go(double seconds) {
	__atomic_store_n(&nt_ns, (int64_t)(seconds * 1e9), __ATOMIC_RELEASE);
	uint64_t v = 1;
	return write(nt_start_fd, &v, sizeof v) == sizeof v ? 0 : -1;
}

static double nt_model_thread_used(void) { return (double)__atomic_load_n(&nt_used_ns, __ATOMIC_ACQUIRE) / 1e9; }
*/
import "C"

import (
	"fmt"
	"os"
	"time"
)

// modelStep burns the calling thread's CPU for d (a fixed amount of work, as a model step is)
// in C, in a cgo call from a locked Go thread (-model-runs cgo). While the call runs the Go
// runtime counts that thread as in a system call holding its P, and its monitor thread
// (sysmon) takes the P back and polls every 20 us for a while after: CPU on another thread
// that is not data loading.
func modelStep(d time.Duration) { C.nt_model_step(C.double(d.Seconds())) }

// modelThread runs the synthetic model step on a C thread the Go runtime does not know
// (-model-runs thread, the default), as a training framework runs its model on its own threads
// (a Python trainer with the reader in libnewtricks): the training loop hands a step to it
// and waits without holding a thread in a system call.
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

// step runs one model step of d CPU seconds on the model thread and returns the CPU it used.
func (m *modelThread) step(d time.Duration) (float64, error) {
	if C.nt_model_thread_go(C.double(d.Seconds())) != 0 {
		return 0, fmt.Errorf("model thread: start signal failed")
	}
	var b [8]byte
	if _, err := m.done.Read(b[:]); err != nil {
		return 0, fmt.Errorf("model thread: %w", err)
	}
	return float64(C.nt_model_thread_used()), nil
}
