package config

import (
	"net/url"
	"strings"
)

// Otel is the OpenTelemetry section (docs/spec.md §15.5): traces of the
// tool calls, the audit records as logs and the metrics, sent over
// OTLP/HTTP. The standard OTEL_EXPORTER_OTLP_* variables configure what
// the section leaves out; the section wins where both say.
type Otel struct {
	// Endpoint is the receiver's base URL (http://collector:4318); each
	// signal goes to its path under it (/v1/traces, /v1/logs,
	// /v1/metrics). "" leaves it to OTEL_EXPORTER_OTLP_ENDPOINT and the
	// per-signal variables; with neither, nothing is exported.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Headers are sent with every request (an API key), after those of
	// OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string `yaml:"headers,omitempty"`
	// Traces, Logs and Metrics switch each signal; nil means on.
	Traces  *bool `yaml:"traces,omitempty"`
	Logs    *bool `yaml:"logs,omitempty"`
	Metrics *bool `yaml:"metrics,omitempty"`
	// LogCommands puts the command text on spans and audit log records;
	// without it they carry none (a command line can hold a secret the
	// redaction does not know).
	LogCommands bool `yaml:"logCommands,omitempty"`
}

// Validate refuses an endpoint that is not an http or https URL, and a
// header that HTTP cannot carry.
func (o Otel) Validate() error {
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return keyErr("endpoint", 0, "must be an http or https URL, like http://127.0.0.1:4318")
		}
	}
	for k, v := range o.Headers {
		if err := checkHeader("headers", k, v, 0); err != nil {
			return err
		}
	}
	return nil
}

// ValidHeader reports whether HTTP can carry a header of this name and
// value (the OTEL_EXPORTER_OTLP_HEADERS variables are checked as the
// section's headers are).
func ValidHeader(name, value string) bool { return checkHeader("", name, value, 0) == nil }

// checkHeader refuses a header HTTP cannot carry.
func checkHeader(key, name, value string, line int) *Error {
	if name == "" || strings.ContainsFunc(name, notTokenChar) {
		return keyErr(key, line, "name %q is not a valid header name", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return keyErr(key, line, "value of %q holds a line break or a NUL byte", name)
	}
	return nil
}

// notTokenChar reports whether r may not be in an HTTP header name.
func notTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
