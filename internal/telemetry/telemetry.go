// Package telemetry builds the tracer provider that exports toolfold's
// spans over OTLP (HTTP or gRPC), from the config's telemetry block and the
// standard OTEL_* variables. It is the one package that knows the
// OpenTelemetry SDK and its exporters; the gateway sees only the trace API.
//
// Off (the default) it builds nothing: no provider, no exporter, no
// goroutine, and the gateway's paths skip every tracing step.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolfold/toolfold/internal/config"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is what the gateway needs to trace: nil Provider means off.
type Tracing struct {
	Provider trace.TracerProvider
	// RecordArguments: meta-tool arguments may go in span attributes.
	RecordArguments bool
	// Shutdown flushes the spans not exported yet and stops the exporter.
	Shutdown func(context.Context) error
	// Endpoint and Protocol say where spans go, for the startup log.
	Endpoint, Protocol string
}

// Enabled reports whether traces are exported: the config says so, or
// OTEL_TRACES_EXPORTER names otlp; OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none keep it off whatever the config says.
func Enabled(cfg config.TelemetryConfig, getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return cfg.Tracing
}

// New builds the tracer provider cfg and the environment ask for, or an
// off Tracing (nil Provider, a Shutdown that does nothing).
func New(ctx context.Context, cfg config.TelemetryConfig, version string, getenv func(string) string) (*Tracing, error) {
	off := &Tracing{Shutdown: func(context.Context) error { return nil }}
	if !Enabled(cfg, getenv) {
		return off, nil
	}
	protocol := firstOf(cfg.Protocol, getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf")
	endpoint := firstOf(cfg.Endpoint, getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "http/protobuf":
		var opts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			// The config names the collector, not the path: traces go to
			// /v1/traces there, as OTEL_EXPORTER_OTLP_ENDPOINT means it.
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(cfg.Endpoint, "/")+"/v1/traces"))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case "grpc":
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("cannot export traces over OTLP protocol %q; use %s (telemetry.protocol, or OTEL_EXPORTER_OTLP_PROTOCOL)", protocol, strings.Join(config.OTLPProtocols, " or "))
	}
	if err != nil {
		return nil, fmt.Errorf("setting up the OTLP trace exporter (%s to %s): %w", protocol, orDefault(endpoint), err)
	}
	name := firstOf(cfg.ServiceName, getenv("OTEL_SERVICE_NAME"), "toolfold")
	// The environment's resource (OTEL_RESOURCE_ATTRIBUTES) under ours.
	res, err := resource.Merge(resource.Environment(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(name), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("describing toolfold to the collector: %w", err)
	}
	// The sampler comes from OTEL_TRACES_SAMPLER when set (the SDK reads
	// it); parent-based always-on otherwise.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, RecordArguments: cfg.RecordArguments, Shutdown: tp.Shutdown, Endpoint: orDefault(redact(endpoint)), Protocol: protocol}, nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func orDefault(endpoint string) string {
	if endpoint == "" {
		return "the exporter's default (localhost)"
	}
	return endpoint
}

// redact drops a URL's userinfo and query, which may carry credentials,
// before it is logged.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
