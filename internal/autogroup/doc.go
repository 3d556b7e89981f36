// Package autogroup folds a big group into a tree of small derived child
// groups, so that an agent reaches any tool of a 200-tool server by enabling
// a short path of groups of at most a target size instead of the whole
// server.
//
// Derivation reads only what the tools say about themselves, strongest
// evidence first: the words of their names (the resource a verb acts on:
// CreateQueue, FetchQueue and ListQueue are one resource; kv_get and kv_put
// another), then the words their descriptions share, then read versus
// change. Groups the upstream or the config already declares are taken as
// given: only the tools they leave over are derived for.
//
// A tool's place depends on its own words and on how many tools of the same
// group share them, never on the order tools arrive in, so the same catalog
// always yields the same tree, and adding or removing one tool moves little
// besides that tool. Derive is pure (names in, tree out); Refine applies it
// to a catalog spec for the assembler.
package autogroup
