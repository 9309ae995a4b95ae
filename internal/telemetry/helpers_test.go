package telemetry_test

import (
	"net"
	"testing"

	"github.com/dsh-go/dsh/tool"
)

func toolCall() tool.Call     { return tool.Call{Name: "bash", Args: []byte(`{"command":"echo hi"}`)} }
func toolResult() tool.Result { return tool.Result{} }

// newHangingReceiver is a listener that accepts and never answers; its
// URL.
func newHangingReceiver(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
