package config

import (
	"strings"
	"testing"
)

func TestTelemetryBlock(t *testing.T) {
	cfg, diags := Parse("t.yaml", []byte("telemetry:\n  tracing: true\n  endpoint: http://127.0.0.1:4317\n  protocol: grpc\n  serviceName: gw\n  recordArguments: true\n"), Options{LookupEnv: MapEnv(nil)})
	if diags.HasErrors() || strings.Contains(diags.String(), "telemetry") {
		t.Fatal(diags)
	}
	if want := (TelemetryConfig{Tracing: true, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc", ServiceName: "gw", RecordArguments: true}); cfg.Telemetry != want {
		t.Errorf("telemetry = %+v, want %+v", cfg.Telemetry, want)
	}
	for _, tc := range []struct{ src, want string }{
		{`{"telemetry": {"tracing": true, "protocol": "http/json"}}`, `"http/json" is not an OTLP protocol`},
		{`{"telemetry": {"tracing": true, "endpoint": "127.0.0.1:4318"}}`, `is not an http(s) URL`},
		{`{"telemetry": {"endpoint": "http://127.0.0.1:4318"}}`, `telemetry.tracing is off`},
	} {
		_, diags := Parse("t.json", []byte(tc.src), Options{LookupEnv: MapEnv(nil)})
		if !strings.Contains(diags.String(), tc.want) {
			t.Errorf("%s: diagnostics\n%s\nlack %q", tc.src, diags, tc.want)
		}
	}
}
