package image

// defaultAVX2 is this process's choice (CPU and NT_XFORM_NOAVX2); the tests switch the
// assembly passes to compare them and restore it.
var defaultAVX2 = AVX2()

// avxModes are the settings a test should compare: SSE2 only, and AVX2 where the CPU has it.
func avxModes() []bool {
	if defaultAVX2 {
		return []bool{false, true}
	}
	return []bool{false}
}
