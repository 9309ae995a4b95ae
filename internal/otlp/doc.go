// Package otlp sends OpenTelemetry data to an OTLP/HTTP receiver in the
// binary protobuf encoding: the SDK's spans ([SpanExporter]) and log
// records ([LogExporter]), and metrics as dsh collects them
// ([EncodeMetrics]).
//
// Why not the SDK's own OTLP exporters: their packages bring gRPC, its
// gateway and protobuf's generated descriptors, whose package
// initialisation costs 1.0–1.4 ms at every start of dsh, whether
// telemetry is configured or not. The messages here are written field by
// field with encoding/binary (wire.go); the tests decode them with the
// protocol's generated Go types, refuse any field those do not know, and
// hold spans and log records to equal the official exporters' requests.
//
// A [Client] posts one signal's requests: it retries what the protocol
// calls retryable within the export's timeout, logs failures without
// flooding, and cuts a post under way when closed.
package otlp
