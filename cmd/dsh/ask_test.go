package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/tool"
)

func TestPromptAsker(t *testing.T) {
	q := tool.Question{Message: "Run this command?\n\nmake\n\nin /w\n\nno rule allows `make`"}
	for in, want := range map[string]tool.Choice{
		"y\n": tool.Accepted, "YES\n": tool.Accepted, " Yes \n": tool.Accepted,
		"n\n": tool.Declined, "\n": tool.Declined, "yess\n": tool.Declined, "": tool.Declined,
	} {
		var out strings.Builder
		got, err := promptAsker(strings.NewReader(in), &out).Ask(context.Background(), q)
		if err != nil || got.Choice != want || got.Remember {
			t.Errorf("answer %q: %+v, %v; want %v", in, got, err, want)
		}
		if out.String() != q.Message+"\n\n[y/N] " {
			t.Errorf("prompt %q", out.String())
		}
	}
}

func TestPromptAskerCancelled(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := promptAsker(r, io.Discard).Ask(ctx, tool.Question{}); err == nil {
		t.Error("a cancelled prompt returned no error")
	}
	w.Close() // ends the abandoned read
}

func TestNoTerminalNoAsker(t *testing.T) {
	if a := terminalAsker(io.Discard, func() {}); a != nil {
		t.Error("an asker without a terminal")
	}
}
