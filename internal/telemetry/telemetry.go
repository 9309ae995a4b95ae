// Package telemetry exports what dsh does as OpenTelemetry (docs/spec.md
// §15.5): a span for every tool call, with the policy's check, the
// questions to the user and the hooks as its children; the audit log's
// records as log records; and the metrics of internal/metrics. It sends
// them over OTLP/HTTP to the receiver the config's otel section or the
// standard OTEL_EXPORTER_OTLP_* variables name.
//
// Spans and log records go through OpenTelemetry's Go SDK (its tracer
// and logger providers, batch processors, sampling, resource). They are
// encoded and sent by internal/otlp, not by the SDK's OTLP exporters,
// whose packages (gRPC, the gateway, protobuf's descriptors) cost
// 1.0–1.4 ms of every dsh start in package initialisation, otel
// configured or not (docs/performance.md). When nothing is configured,
// [New] returns nil: no provider, no goroutine, no connection.
//
// Like the audit log it only observes: [Telemetry.Call] is a tool
// observer, which the registry calls with the call's span on its context
// (tool.WithTracer); [Telemetry.TaskEnd] and [Telemetry.Net] see what
// the audit log sees.
//
// Decisions where docs/spec.md is silent:
//   - The command text, the original command and the workdir are on spans
//     and log records only with otel.logCommands; the output never is.
//   - A call that ended as an error result, or whose command timed out,
//     is a span with status Error; `error.type` is the tool's error code,
//     or "timeout". A command that exited non-zero is not an error of the
//     tool call.
//   - Shutdown flushes for at most 3 s, whatever the receiver does: a
//     client ending dsh does not wait for a receiver that is down.
package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/otlp"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/tool"
)

// shutdownTimeout bounds the flush at Shutdown.
const shutdownTimeout = 3 * time.Second

// Options are what New needs besides the section.
type Options struct {
	// Logger receives warnings and export failures; nil is slog.Default().
	Logger *slog.Logger
	// Redactor redacts the texts of log records and span attributes, as
	// the audit log's; nil redacts nothing.
	Redactor *redact.Redactor
	// Version gives service.version; nil is none. It is asked only when
	// something is exported (reading the build info costs every start).
	Version func() string
	// Getenv reads the standard variables; nil is os.Getenv. The
	// resource's (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) are read
	// from the process's environment.
	Getenv func(string) string
}

// Telemetry is the export of one dsh process. Its methods are safe for
// concurrent use, and on a nil Telemetry do nothing.
type Telemetry struct {
	settings Settings
	log      *slog.Logger
	red      *redact.Redactor
	res      *resource.Resource
	scope    instrumentation.Scope

	tp     *sdktrace.TracerProvider // nil: traces off
	lp     *sdklog.LoggerProvider   // nil: logs off
	logger otellog.Logger

	mu      sync.Mutex
	metrics *pusher // ExportMetrics's; nil before it or with metrics off
	closed  bool
	clients []*otlp.Client // all made, closed last at Shutdown
}

// New starts the export cfg and the variables ask for. It returns nil
// when they ask for none.
func New(cfg config.Otel, o Options) *Telemetry {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s, warnings := Resolve(cfg, o.Getenv)
	for _, w := range warnings {
		o.Logger.Warn("otel: " + w)
	}
	if !s.On() {
		return nil
	}
	version := ""
	if o.Version != nil {
		version = o.Version()
	}
	t := &Telemetry{settings: s, log: o.Logger, red: o.Redactor, scope: instrumentation.Scope{Name: tool.Scope, Version: version}}
	t.res = newResource(version, o.Logger)
	// The SDK reports what it drops; our exporters log their own failures.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { t.log.Debug("otel: sdk", "err", err) }))
	if s.Traces != nil {
		exp := otlp.NewSpanExporter(t.client(s.Traces))
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(t.res))
	}
	if s.Logs != nil {
		exp := otlp.NewLogExporter(t.client(s.Logs))
		t.lp = sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(t.res))
		t.logger = t.lp.Logger(tool.Scope, otellog.WithInstrumentationVersion(version))
	}
	return t
}

// newResource is service.name dsh and its version, then what
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES in dsh's environment say.
func newResource(version string, log *slog.Logger) *resource.Resource {
	own := resource.NewSchemaless(attribute.String("service.name", "dsh"), attribute.String("service.version", version))
	res, err := resource.Merge(resource.Default(), own)
	if err != nil {
		res = own
	}
	if merged, err := resource.Merge(res, resource.Environment()); err == nil {
		res = merged
	} else {
		log.Warn("otel: resource", "err", err)
	}
	return res
}

func (t *Telemetry) client(s *Signal) *otlp.Client {
	c := otlp.NewClient(otlp.ClientConfig{URL: s.URL, Headers: s.Headers, Gzip: s.Gzip, Timeout: s.Timeout, Logger: t.log, TLS: t.tlsConfig(s)})
	t.clients = append(t.clients, c) // under t.mu, or before New returns
	return c
}

// tlsConfig is s's certificates as a TLS config; nil when it names none.
// A file that cannot be read is a warning: the system's roots, no client
// certificate.
func (t *Telemetry) tlsConfig(s *Signal) *tls.Config {
	if s.Certificate == "" && s.ClientCertificate == "" {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.Certificate != "" {
		pem, err := os.ReadFile(s.Certificate)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			t.log.Warn("otel: no CA certificate read; trusting the system's", "file", s.Certificate, "err", err)
		} else {
			cfg.RootCAs = pool
		}
	}
	if s.ClientCertificate != "" {
		pair, err := tls.LoadX509KeyPair(s.ClientCertificate, s.ClientKey)
		if err != nil {
			t.log.Warn("otel: no client certificate", "file", s.ClientCertificate, "err", err)
		} else {
			cfg.Certificates = []tls.Certificate{pair}
		}
	}
	return cfg
}

// Tracer is the tracer of the tool calls' spans; nil when traces are off.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp.Tracer(tool.Scope, trace.WithInstrumentationVersion(t.scope.Version))
}

// MetricsOn reports whether metrics are exported.
func (t *Telemetry) MetricsOn() bool { return t != nil && t.settings.Metrics != nil }

// Shutdown flushes what is pending, for at most shutdownTimeout, and
// stops the export.
func (t *Telemetry) Shutdown() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	p := t.metrics
	for _, c := range t.clients {
		c.Final()
	}
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// At once, each with the whole time: one receiver that hangs must not
	// leave the others' no time at all.
	var stops []func(context.Context) error
	if p != nil {
		stops = append(stops, p.stop)
	}
	if t.tp != nil {
		stops = append(stops, t.tp.Shutdown)
	}
	if t.lp != nil {
		stops = append(stops, t.lp.Shutdown)
	}
	errs := make([]error, len(stops))
	var wg sync.WaitGroup
	for i, stop := range stops {
		wg.Go(func() { errs[i] = stop(ctx) })
	}
	wg.Wait()
	// What the providers gave up waiting for is cut now: no export
	// outlives Shutdown.
	t.mu.Lock()
	for _, c := range t.clients {
		c.Close()
	}
	t.mu.Unlock()
	return errors.Join(errs...)
}
