package main

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/demo"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// deployment are the switches shared by the commands that read a catalog.
type deployment struct {
	config        string
	mode          string
	groups        string
	excludeGroups string
	readOnly      bool
}

// setup is what a command serves or inspects.
type setup struct {
	// origin says where the catalog came from, for messages.
	origin string
	server *toolfold.Server
	opts   toolfold.Options
}

// load finds what to serve. Until config files are supported it is always
// the built-in demo catalog; an explicit --config is refused rather than
// silently ignored.
func load(d deployment, logger *slog.Logger) (*setup, error) {
	if d.config != "" {
		return nil, fmt.Errorf("cannot read %s: config files are not supported by this build yet; run without --config to serve the built-in demo", d.config)
	}
	opts := toolfold.Options{
		Name: "toolfold-demo", Version: version(),
		Mode:          toolfold.Mode(d.mode),
		InitialGroups: splitList(d.groups),
		ExcludeGroups: splitList(d.excludeGroups),
		ReadOnly:      d.readOnly,
		Logger:        logger,
	}
	if _, err := expose.ParseMode(d.mode); err != nil {
		return nil, usageError{err.Error()}
	}
	return &setup{origin: "the built-in demo catalog", server: demo.New(&demo.Options{Server: opts}), opts: opts}, nil
}

// catalog builds the catalog the setup serves, with the deployment switches
// applied, for the inspection commands: groups turned on with --groups show
// as enabled.
func (s *setup) catalog() (*catalog.Catalog, error) {
	spec, err := s.server.Spec()
	if err != nil {
		return nil, err
	}
	for i := range spec.Groups {
		if slices.Contains(s.opts.InitialGroups, string(spec.Groups[i].ID)) && spec.Groups[i].Default != catalog.Excluded {
			spec.Groups[i].Default = catalog.Enabled
		}
	}
	res, err := catalog.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("%s does not build: %w", s.origin, err)
	}
	return res.Catalog, nil
}

// initialGroups are the --groups names as catalog IDs.
func (s *setup) initialGroups() []catalog.GroupID {
	out := make([]catalog.GroupID, len(s.opts.InitialGroups))
	for i, g := range s.opts.InitialGroups {
		out[i] = catalog.GroupID(g)
	}
	return out
}

// flatExposure renders every tool flat, which is what costs are measured on.
func flatExposure(cat *catalog.Catalog) (*expose.Exposure, error) {
	space, err := view.NewSpace(cat, nil)
	if err != nil {
		return nil, err
	}
	return expose.Build(space, &expose.Options{Mode: expose.Flat, AnnotateDescriptions: true})
}
