package upstream

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

type recordingTripper struct{ got http.Header }

func (r *recordingTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req.Header.Clone()
	return &http.Response{StatusCode: http.StatusAccepted, Body: http.NoBody, Request: req}, nil
}

// TestRemoteRequestsCarryTheTraceInHeaders: a request made inside a traced
// call (the gateway's client span in its context) tells a remote server
// its trace context in the headers too; an untraced one adds nothing.
func TestRemoteRequestsCarryTheTraceInHeaders(t *testing.T) {
	base := &recordingTripper{}
	h := &headerTransport{base: base, headers: map[string]string{"X-Key": "v"}}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/mcp", http.NoBody)
	if _, err := h.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got, want := base.got.Get("traceparent"), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; got != want || base.got.Get("X-Key") != "v" {
		t.Errorf("traceparent header %q (X-Key %q), want %q", got, base.got.Get("X-Key"), want)
	}
	req, _ = http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1:1/mcp", http.NoBody)
	if _, err := h.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got := base.got.Get("traceparent"); got != "" {
		t.Errorf("an untraced request got traceparent %q", got)
	}
}
