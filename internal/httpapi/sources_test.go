package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/upstream"
)

// /healthz shows how many starts of a server failed and when toolfold
// tries it again.
func TestUpstreamSourcesCarryRetries(t *testing.T) {
	next := time.Date(2026, 5, 1, 10, 0, 4, 0, time.UTC)
	out := UpstreamSources([]upstream.Status{{Name: "npx", State: upstream.StateFailed, FailedStarts: 3, NextStart: next}, {Name: "ok", State: upstream.StateReady}})
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"failedStarts":3,"nextStart":"2026-05-01T10:00:04Z"`) || strings.Count(string(b), "nextStart") != 1 {
		t.Errorf("sources: %s", b)
	}
}
