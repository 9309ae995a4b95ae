package safe

import (
	"bytes"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestCallReturnsNilWithoutPanic(t *testing.T) {
	ran := false
	if err := Call(nil, "x", func() { ran = true }); err != nil || !ran {
		t.Fatalf("Call = %v, ran %v; want nil, true", err, ran)
	}
}

func TestCallContainsAndLogsAPanic(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	err := Call(log, "finish listener", func() { panic("boom") }, "task", "bash-1")
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || err.Error() != "boom" {
		t.Fatalf("Call = %#v, want a *PanicError with value boom", err)
	}
	if !bytes.Contains(pe.Stack, []byte("safe_test.go")) {
		t.Errorf("stack does not show where the panic was raised:\n%s", pe.Stack)
	}
	for _, want := range []string{"level=ERROR", `msg="finish listener panicked"`, "task=bash-1", "panic=boom", "stack="} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestCallLetsGoexitUnwind(t *testing.T) {
	var wg sync.WaitGroup
	returned := false
	wg.Go(func() {
		defer func() { returned = true }()
		_ = Call(nil, "x", func() { runtime.Goexit() })
		t.Error("Call returned after Goexit")
	})
	wg.Wait()
	if !returned {
		t.Fatal("the goroutine's defers did not run")
	}
}
