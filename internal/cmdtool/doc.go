// Package cmdtool turns command-line programs into folded tools and runs
// them safely (SPEC §7).
package cmdtool
