package main

/*
#include <time.h>

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
*/
import "C"

import "time"

// modelStep burns the calling thread's CPU for d (a fixed amount of work, as a model step is)
// in C, outside the Go scheduler, as a real model step runs (C++/CUDA kernels called from the
// training framework): a Go loop on a locked thread is preempted every 10 ms and handed between
// threads by the scheduler, which costs CPU on other threads that is not data loading.
func modelStep(d time.Duration) { C.nt_model_step(C.double(d.Seconds())) }
