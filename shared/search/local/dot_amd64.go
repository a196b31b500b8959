//go:build amd64 && !purego

package local

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2+FMA kernel: 8 floats per instruction, four
// independent accumulators (about 8x the portable loop).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 is dot with AVX2 and FMA; len(b) must be at least len(a).
//
//go:noescape
func dotAVX2(a, b []float32) float32

// dot is the inner product of two vectors of the same length.
func dot(a, b []float32) float32 {
	if useAVX2 {
		return dotAVX2(a, b[:len(a)])
	}
	return dotGeneric(a, b)
}
