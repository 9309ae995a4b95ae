package otlp_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/dsh-go/dsh/internal/otlp"
)

// A tracer provider whose batches go to a receiver.
func Example() {
	c := otlp.NewClient(otlp.ClientConfig{URL: "http://127.0.0.1:4318" + otlp.TracesPath})
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(otlp.NewSpanExporter(c)))
	_, span := tp.Tracer("example").Start(context.Background(), "execute_tool bash")
	span.SetAttributes(attribute.Int("process.exit.code", 0))
	span.End()
	fmt.Println(len(otlp.EncodeSpans(nil)))
	// Shutdown flushes to the receiver; here the client is closed first,
	// as there is none: the export fails at once, and is logged.
	c.Close()
	_ = tp.Shutdown(context.Background())
	// Output: 0
}
