package mcpserver

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNoncesAreUsedOnce: a suspended call's state works for one retry;
// a session keeps a bounded number of them.
func TestNoncesAreUsedOnce(t *testing.T) {
	s := &Server{nonces: make(map[*mcp.ServerSession]map[string]time.Time)}
	ss := &mcp.ServerSession{}
	n := s.newNonce(ss)
	if !s.useNonce(ss, n) || s.useNonce(ss, n) {
		t.Error("a nonce worked other than once")
	}
	if s.useNonce(&mcp.ServerSession{}, s.newNonce(ss)) {
		t.Error("another session's nonce worked")
	}
	first := s.newNonce(ss)
	for range maxNonces {
		s.newNonce(ss)
	}
	if len(s.nonces[ss]) > maxNonces || s.useNonce(ss, first) {
		t.Errorf("%d nonces kept; the oldest still works", len(s.nonces[ss]))
	}
}
