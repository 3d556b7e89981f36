package assemble

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A server whose start fails with no cached list is unavailable in the
// catalog, with why and when the Manager tries it again by itself.
func TestFailedServerIsUnavailableWithItsRetry(t *testing.T) {
	cfg := load(t, `{"mcpServers": {"bad": {"command": "false"}}}`)
	p, err := FromConfig(context.Background(), cfg, Switches{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Upstreams.Close() })
	if errs := p.Upstreams.Discover(context.Background(), 0); errs["bad"] == nil {
		t.Fatalf("the start must fail: %v", errs)
	}
	spec, _, _ := p.spec()
	if why := spec.UnavailableSources["bad"]; !strings.Contains(why, `upstream "bad" exited at start (exit status 1)`) {
		t.Errorf("why: %q", why)
	}
	if at := spec.UnavailableRetry["bad"]; at.IsZero() || at.After(time.Now().Add(time.Second)) {
		t.Errorf("next try at %v: want within a second (the first retry)", at)
	}
}
