//go:build !unix

package main

import "time"

func selfCPU() (time.Duration, bool)       { return 0, false }
func processCPU(int) (time.Duration, bool) { return 0, false }
