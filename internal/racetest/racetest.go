// Package racetest tells tests whether the race detector is built in.
// Allocation counts are among what it changes (values it must track move
// to the heap), so tests that count allocations run without it.
package racetest
