package config_test

import (
	"testing"

	"github.com/dsh-go/dsh/config"
)

func TestOtelSection(t *testing.T) {
	f, err := config.Parse([]byte("otel:\n  endpoint: http://127.0.0.1:4318\n  headers: {x-api-key: abc}\n  metrics: false\n  logCommands: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := f.Otel
	if o.Endpoint != "http://127.0.0.1:4318" || o.Headers["x-api-key"] != "abc" || o.Metrics == nil || *o.Metrics || o.Traces != nil || !o.LogCommands {
		t.Fatalf("parsed %+v", o)
	}
	for in, want := range map[string]string{
		"otel:\n  endpoint: localhost:4318\n": "otel.endpoint must be an http or https URL, like http://127.0.0.1:4318 (line 2)",
		"otel:\n  endpoint: ftp://x\n":        "otel.endpoint must be an http or https URL, like http://127.0.0.1:4318 (line 2)",
		"otel:\n  headers: {\"a b\": x}\n":    `otel.headers name "a b" is not a valid header name (line 2)`,
		"otel:\n  headers: {a: \"x\\ny\"}\n":  `otel.headers value of "a" holds a line break or a NUL byte (line 2)`,
		"otel:\n  logcommands: true\n":        "otel.logcommands: unknown key (line 2); did you mean otel.logCommands?",
		"otel:\n  traces: yes\n":              "otel.traces must be true or false (line 2)",
	} {
		if _, err := config.Parse([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%q: got %v\nwant %s", in, err, want)
		}
	}
}
