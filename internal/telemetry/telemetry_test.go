package telemetry

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEnabled(t *testing.T) {
	on := config.TelemetryConfig{Tracing: true}
	for _, tc := range []struct {
		name string
		cfg  config.TelemetryConfig
		vars map[string]string
		want bool
	}{
		{"off by default", config.TelemetryConfig{}, nil, false},
		{"the config", on, nil, true},
		{"OTEL_TRACES_EXPORTER=otlp", config.TelemetryConfig{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"OTEL_TRACES_EXPORTER=none", on, map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{"OTEL_SDK_DISABLED", on, map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
	} {
		if got := Enabled(tc.cfg, env(tc.vars)); got != tc.want {
			t.Errorf("%s: Enabled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOffCostsNothing: off builds no provider and starts no goroutine.
func TestOffCostsNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	tr, err := New(context.Background(), config.TelemetryConfig{}, "dev", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Provider != nil {
		t.Error("tracing off built a provider")
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("tracing off started %d goroutines", n-before)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestProtocols(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		cfg          config.TelemetryConfig
		vars         map[string]string
		wantProtocol string
	}{
		{config.TelemetryConfig{Tracing: true, Endpoint: "http://127.0.0.1:4318"}, nil, "http/protobuf"},
		{config.TelemetryConfig{Tracing: true, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc"}, nil, "grpc"},
		{config.TelemetryConfig{Tracing: true}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://u:p@127.0.0.1:4317?k=v"}, "grpc"},
	} {
		tr, err := New(ctx, tc.cfg, "dev", env(tc.vars))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Provider == nil || tr.Protocol != tc.wantProtocol {
			t.Errorf("%+v: provider %v, protocol %q, want %q", tc.cfg, tr.Provider, tr.Protocol, tc.wantProtocol)
		}
		if strings.Contains(tr.Endpoint, "u:p") || strings.Contains(tr.Endpoint, "k=v") {
			t.Errorf("the endpoint to log keeps credentials: %s", tr.Endpoint)
		}
		_ = tr.Shutdown(ctx)
	}
	if _, err := New(ctx, config.TelemetryConfig{Tracing: true, Protocol: "http/json"}, "dev", env(nil)); err == nil || !strings.Contains(err.Error(), "use http/protobuf or grpc") {
		t.Errorf("an unknown protocol: %v", err)
	}
}
