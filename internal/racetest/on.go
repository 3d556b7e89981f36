//go:build race

package racetest

// Enabled reports that the race detector is built in.
const Enabled = true
