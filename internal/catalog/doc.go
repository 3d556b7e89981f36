// Package catalog holds toolfold's inventory: every tool that any source
// offers, the groups that bundle them, and the rules that decide membership.
//
// A Catalog is built once from a Spec and never changes afterwards; a source
// that learns of new tools produces a new Catalog. Everything downstream
// (views, exposition, search) reads it without locks. Tools and groups carry
// dense integer indexes besides their names so that views can keep their
// state in bitsets: enabling a group and rendering a list stays cheap at
// thousands of tools.
package catalog
