package telemetry

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/otlp"
)

// Signal is one signal's destination: the URL its requests are posted to
// and how.
type Signal struct {
	URL     string
	Headers map[string]string // by canonical name
	Timeout time.Duration
	Gzip    bool
	// Certificate is a PEM file of the CAs to trust instead of the
	// system's; ClientCertificate and ClientKey a client's pair (mTLS).
	Certificate, ClientCertificate, ClientKey string
}

// Settings are the signals to export, resolved from the config's otel
// section and the standard variables; a nil signal is off.
type Settings struct {
	Traces, Logs, Metrics *Signal
	// LogCommands: otel.logCommands.
	LogCommands bool
	// MetricInterval is OTEL_METRIC_EXPORT_INTERVAL (default 60 s).
	MetricInterval time.Duration
}

// On reports whether any signal is exported.
func (s Settings) On() bool { return s.Traces != nil || s.Logs != nil || s.Metrics != nil }

// Defaults of the standard variables.
const (
	defaultTimeout        = 10 * time.Second
	defaultMetricInterval = 60 * time.Second
)

// Resolve reads cfg and the variables getenv returns. The section wins
// where both say: its endpoint over OTEL_EXPORTER_OTLP_ENDPOINT and the
// per-signal ones, its headers over the variables' of the same name. A
// variable dsh cannot honour (a protocol other than http/protobuf, an
// exporter other than otlp or none, a timeout that is not a number) turns
// its signal off, or takes the default, with a warning.
func Resolve(cfg config.Otel, getenv func(string) string) (s Settings, warnings []string) {
	s = Settings{LogCommands: cfg.LogCommands, MetricInterval: defaultMetricInterval}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	if v := getenv("OTEL_METRIC_EXPORT_INTERVAL"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			s.MetricInterval = time.Duration(ms * float64(time.Millisecond))
		} else {
			warnings = append(warnings, fmt.Sprintf("OTEL_METRIC_EXPORT_INTERVAL=%q is not a positive number of milliseconds: using 60000", v))
		}
	}
	r := resolver{cfg: cfg, getenv: getenv}
	s.Traces = r.signal("TRACES", otlp.TracesPath, cfg.Traces)
	s.Logs = r.signal("LOGS", otlp.LogsPath, cfg.Logs)
	s.Metrics = r.signal("METRICS", otlp.MetricsPath, cfg.Metrics)
	return s, append(warnings, r.warnings...)
}

type resolver struct {
	cfg      config.Otel
	getenv   func(string) string
	warnings []string
}

func (r *resolver) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// env is the per-signal variable, else the general one.
func (r *resolver) env(sig, name string) (key, value string) {
	key = "OTEL_EXPORTER_OTLP_" + sig + "_" + name
	if v := r.getenv(key); v != "" {
		return key, v
	}
	key = "OTEL_EXPORTER_OTLP_" + name
	return key, r.getenv(key)
}

// signal resolves one signal; nil when it is off.
func (r *resolver) signal(sig, path string, on *bool) *Signal {
	if on != nil && !*on {
		return nil
	}
	switch v := strings.TrimSpace(r.getenv("OTEL_" + sig + "_EXPORTER")); v {
	case "", "otlp":
	case "none":
		return nil
	default:
		r.warn("OTEL_%s_EXPORTER=%q: dsh exports only otlp; %s are off", sig, v, strings.ToLower(sig))
		return nil
	}
	u := r.url(sig, path)
	if u == "" {
		return nil
	}
	if k, v := r.env(sig, "PROTOCOL"); v != "" && v != "http/protobuf" {
		r.warn("%s=%q: dsh speaks OTLP over HTTP only (http/protobuf); %s are off", k, v, strings.ToLower(sig))
		return nil
	}
	out := &Signal{URL: u, Timeout: defaultTimeout, Headers: map[string]string{}}
	if k, v := r.env(sig, "TIMEOUT"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			out.Timeout = time.Duration(ms * float64(time.Millisecond))
		} else {
			r.warn("%s=%q is not a positive number of milliseconds: using 10000", k, v)
		}
	}
	switch k, v := r.env(sig, "COMPRESSION"); v {
	case "gzip":
		out.Gzip = true
	case "", "none":
	default:
		r.warn("%s=%q: not gzip or none; sending uncompressed", k, v)
	}
	// The signal's variable replaces the general one, as the
	// specification says: its headers may be for another receiver.
	k, _ := r.env(sig, "HEADERS")
	r.headers(out.Headers, k)
	for k, v := range r.cfg.Headers {
		out.Headers[http.CanonicalHeaderKey(k)] = v
	}
	_, out.Certificate = r.env(sig, "CERTIFICATE")
	_, out.ClientCertificate = r.env(sig, "CLIENT_CERTIFICATE")
	_, out.ClientKey = r.env(sig, "CLIENT_KEY")
	return out
}

// url is where a signal goes: under the section's endpoint, else the
// per-signal variable as it is, else under the general variable.
func (r *resolver) url(sig, path string) string {
	if r.cfg.Endpoint != "" {
		return join(r.cfg.Endpoint, path)
	}
	key := "OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT"
	if v := r.getenv(key); v != "" {
		if !httpURL(v) {
			r.warn("%s=%q is not an http or https URL; %s are off", key, v, strings.ToLower(sig))
			return ""
		}
		return v
	}
	v := r.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	if v == "" {
		return ""
	}
	if !httpURL(v) {
		r.warn("OTEL_EXPORTER_OTLP_ENDPOINT=%q is not an http or https URL; %s are off", v, strings.ToLower(sig))
		return ""
	}
	return join(v, path)
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// join puts a signal's path under a base URL, as the OTLP exporter
// specification says: http://c:4318 and http://c:4318/ both give
// http://c:4318/v1/traces.
func join(base, path string) string { return strings.TrimRight(base, "/") + path }

// headers adds the headers of the variable key: name=value pairs
// separated by commas, the values percent-decoded.
func (r *resolver) headers(dst map[string]string, key string) {
	v := r.getenv(key)
	if v == "" {
		return
	}
	for pair := range strings.SplitSeq(v, ",") {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		dec, err := url.PathUnescape(strings.TrimSpace(value))
		if !ok || name == "" || err != nil || !config.ValidHeader(name, dec) {
			r.warn("%s: %q is not name=value of a valid header; left out", key, pair)
			continue
		}
		dst[http.CanonicalHeaderKey(name)] = dec
	}
}
