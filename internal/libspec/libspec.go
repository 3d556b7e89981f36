// Package libspec hands a library server's catalog spec (toolfold.Server)
// to toolfold's own packages that mount or inspect library servers (the
// public gateway package, the toolfold command, the demo), so that the
// public API never returns an internal type.
//
// Package toolfold registers the one function that reads a server's spec
// when it is initialised, which is before any code that holds a
// *toolfold.Server can run; it is never changed afterwards. It cannot be
// an import instead, because package toolfold imports the engine this
// package belongs to.
package libspec

import (
	"fmt"

	"github.com/toolfold/toolfold/internal/catalog"
)

// specOf is set once, by package toolfold's init.
var specOf func(server any) (catalog.Spec, error)

// Register is for package toolfold's init only.
func Register(f func(server any) (catalog.Spec, error)) {
	if specOf != nil {
		panic("libspec: registered twice")
	}
	specOf = f
}

// Of describes server, a *toolfold.Server, with its ReadOnly and
// ExcludeGroups applied.
func Of(server any) (catalog.Spec, error) {
	if specOf == nil {
		return catalog.Spec{}, fmt.Errorf("libspec: package toolfold is not linked, so %T cannot be read", server)
	}
	return specOf(server)
}
