//go:build !unix

package main

// fdLimit is unknown here: connections are bounded by timeouts alone.
func fdLimit() uint64 { return 0 }
