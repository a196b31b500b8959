package local

// dotGeneric is the inner product of two vectors of the same length. Eight
// independent accumulators let the CPU overlap the multiply-adds; the
// compiler removes the bounds checks thanks to the re-slicing.
func dotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// dotI8Generic is the inner product of int16 query values and int8 codes.
func dotI8Generic(q []int16, c []int8) int32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		qq := q[i : i+4 : i+4]
		cc := c[i : i+4 : i+4]
		s0 += int32(qq[0]) * int32(cc[0])
		s1 += int32(qq[1]) * int32(cc[1])
		s2 += int32(qq[2]) * int32(cc[2])
		s3 += int32(qq[3]) * int32(cc[3])
	}
	for ; i < len(q); i++ {
		s0 += int32(q[i]) * int32(c[i])
	}
	return s0 + s1 + s2 + s3
}
