//go:build !race

package mcpserver_test

// raceDetector: the test binary was built with -race.
const raceDetector = false
