package cmdtool

import (
	"context"
	"os/exec"
	"testing"
)

// TestDiscoverLiveDocker reads the help of the installed docker client (it
// needs no engine) and checks the cobra layout is understood, management
// commands and nested subcommands included.
func TestDiscoverLiveDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs docker about 170 times")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("skipping: the docker client is not installed")
	}
	p := Program{Name: "docker", Command: "docker", Discover: DiscoverHelp, Include: []string{"ps", "images", "container *", "image *", "version"}}
	found, err := Discover(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	actions := found.Actions
	byName := map[string]Action{}
	for _, a := range actions {
		byName[a.Name] = a
	}
	for _, want := range []string{"ps", "images", "container_ls", "container_logs", "image_ls", "version"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("docker action %q not discovered; got %d actions", want, len(actions))
		}
	}
	if _, ok := byName["run"]; ok {
		t.Error("include globs were not applied: run was discovered")
	}
	ps := byName["ps"]
	if !ps.ReadOnly {
		t.Error("docker ps should be known read-only")
	}
	hasAll := false
	for _, prm := range ps.Params {
		if prm.Name == "all" && prm.Type == TypeBoolean {
			hasAll = true
		}
	}
	if !hasAll {
		t.Errorf("docker ps lacks its --all flag: %+v", ps.Params)
	}
}
