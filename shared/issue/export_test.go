package issue

// ComputeSnapshot exposes the statistics arithmetic to the tests.
var ComputeSnapshot = computeSnapshot
