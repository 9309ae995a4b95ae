package otlp

// The protobuf wire format, as much of it as OTLP's messages use. Fields
// follow proto3: a scalar at its zero value is left out, except where
// presence matters (a oneof, an optional field), which the callers say.

import "encoding/binary"

// Wire types.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

// buf is a message being written.
type buf []byte

func (b *buf) tag(field, wire int) { *b = binary.AppendUvarint(*b, uint64(field)<<3|uint64(wire)) }

// varint writes an integer field (uint32, uint64, int64 as two's
// complement, an enum); zero is left out.
func (b *buf) varint(field int, v uint64) {
	if v != 0 {
		b.varintAlways(field, v)
	}
}

func (b *buf) varintAlways(field int, v uint64) {
	b.tag(field, wireVarint)
	*b = binary.AppendUvarint(*b, v)
}

// fixed64 writes a fixed64, sfixed64 or double field; zero is left out.
func (b *buf) fixed64(field int, v uint64) {
	if v != 0 {
		b.fixed64Always(field, v)
	}
}

func (b *buf) fixed64Always(field int, v uint64) {
	b.tag(field, wire64)
	*b = binary.LittleEndian.AppendUint64(*b, v)
}

// fixed32 writes a fixed32 field; zero is left out.
func (b *buf) fixed32(field int, v uint32) {
	if v != 0 {
		b.tag(field, wire32)
		*b = binary.LittleEndian.AppendUint32(*b, v)
	}
}

// str writes a string field; "" is left out.
func (b *buf) str(field int, s string) {
	if s != "" {
		b.strAlways(field, s)
	}
}

func (b *buf) strAlways(field int, s string) {
	b.tag(field, wireBytes)
	*b = binary.AppendUvarint(*b, uint64(len(s)))
	*b = append(*b, s...)
}

// bytes writes a bytes field; empty is left out.
func (b *buf) bytes(field int, p []byte) {
	if len(p) != 0 {
		b.strAlways(field, string(p))
	}
}

// msg writes a message field, even an empty one: a message's presence
// is part of it.
func (b *buf) msg(field int, write func(*buf)) {
	var m buf
	write(&m)
	b.tag(field, wireBytes)
	*b = binary.AppendUvarint(*b, uint64(len(m)))
	*b = append(*b, m...)
}

// packedFixed64 writes a packed repeated fixed64 or double field; an
// empty list is left out.
func (b *buf) packedFixed64(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	b.tag(field, wireBytes)
	*b = binary.AppendUvarint(*b, uint64(8*len(vs)))
	for _, v := range vs {
		*b = binary.LittleEndian.AppendUint64(*b, v)
	}
}
