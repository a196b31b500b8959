//go:build !amd64 || purego

package local

// dot is the inner product of two vectors of the same length.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// useInt8 is false: the portable int8 loop is slower than the float32 one
// (21 ms against 14 ms per 100,000 rows of 384 on amd64 with -tags purego).
const useInt8 = false

// dotI8 is the inner product of a quantised query and a row of codes of
// the same length.
func dotI8(q []int16, c []int8) int32 { return dotI8Generic(q, c) }
