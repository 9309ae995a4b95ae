package execcore

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestResolveTimeout(t *testing.T) {
	for _, tc := range []struct {
		given *float64
		want  time.Duration
		err   string
	}{
		{nil, 2 * time.Second, ""},
		{new(0.1), time.Millisecond, ""},
		{new(1.5), 2 * time.Millisecond, ""},
		{new(1e12), 5 * time.Second, ""},
		{new(0.0), 0, "x: request.timeoutMs must be a positive finite number"},
		{new(-1.0), 0, "x: request.timeoutMs must be a positive finite number"},
		{new(math.Inf(1)), 0, "x: request.timeoutMs must be a positive finite number"},
		{new(math.NaN()), 0, "x: request.timeoutMs must be a positive finite number"},
	} {
		got, err := ResolveTimeout("x", tc.given, 2000, 5000)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ResolveTimeout(%v) = %v, %v; want %v, %q", tc.given, got, err, tc.want, tc.err)
		}
	}
}

func TestCheckForeground(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("client went away"))
	if err := CheckForeground("x", ctx, bash.Spec{Timeout: time.Second}); err == nil || err.Error() != "aborted before spawn: client went away" {
		t.Errorf("cancelled with a cause: %v", err)
	}
	ctx, cancelPlain := context.WithCancel(context.Background())
	cancelPlain()
	if err := CheckForeground("x", ctx, bash.Spec{Timeout: time.Second}); err == nil || err.Error() != "aborted before spawn: aborted" {
		t.Errorf("cancelled: %v", err)
	}
	if err := CheckForeground("x", context.Background(), bash.Spec{}); err == nil || err.Error() != "x: spec.Timeout must be > 0 (resolve the request first)" {
		t.Errorf("no timeout: %v", err)
	}
}

func TestProcessState(t *testing.T) {
	running, done := make(chan struct{}), make(chan struct{})
	close(done)
	zero := 0
	exited := func() (*int, string, error) { return &zero, "", nil }
	signalled := func() (*int, string, error) { return nil, "SIGTERM", nil }
	lost := func() (*int, string, error) { return nil, "", errors.New("ssh: connection to h lost") }
	for _, tc := range []struct {
		name             string
		done             chan struct{}
		killed, timedOut bool
		exit             func() (*int, string, error)
		want             bash.Status
		wantTimedOut     bool
		wantErr          bool
	}{
		{"running", running, false, false, exited, bash.StatusRunning, false, false},
		{"being killed", running, true, false, exited, bash.StatusKilled, false, false},
		{"being killed by its timeout", running, true, true, exited, bash.StatusKilled, true, false},
		{"exited", done, false, false, exited, bash.StatusCompleted, false, false},
		{"exited after a kill", done, true, false, exited, bash.StatusKilled, false, false},
		{"signalled itself", done, false, false, signalled, bash.StatusKilled, false, false},
		{"lost", done, false, false, lost, bash.StatusKilled, false, true},
	} {
		st := processState(tc.done, tc.killed, tc.timedOut, tc.exit)
		if st.Status != tc.want || st.TimedOut != tc.wantTimedOut || (st.Err != nil) != tc.wantErr {
			t.Errorf("%s: %+v", tc.name, st)
		}
	}
}
