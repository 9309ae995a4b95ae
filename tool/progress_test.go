package tool

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestHeartbeat: a quiet call gets a notification every second saying
// how long it has run; output is reported at once, or 250 ms after the
// previous notification; progress strictly increases even when no byte
// was added; nothing is sent after Stop (docs/spec.md §6.4, §12).
func TestHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		start := time.Now()
		h := StartHeartbeat(func(p float64, m string) {
			got = append(got, fmt.Sprintf("%v %g %s", time.Since(start), p, m))
		}, start.Add(-500*time.Millisecond)) // it arrived before the heartbeat started
		time.Sleep(2400 * time.Millisecond)
		h.Report(100, "building")
		time.Sleep(100 * time.Millisecond)
		h.Report(120, "") // too soon: waits for 250 ms after the last one
		time.Sleep(time.Second + 160*time.Millisecond)
		// 10 ms after a notification: the result waits 10 ms more; the
		// report still waiting is not sent.
		h.Report(130, "")
		stopAt := time.Now()
		h.Stop()
		if waited := time.Since(stopAt); waited != 10*time.Millisecond {
			t.Errorf("Stop 10 ms after a notification returned after %v", waited)
		}
		h.Report(500, "late")
		want := []string{
			"500ms 0 running for 1s",
			"1.5s 1 running for 2s",
			"2.4s 102 building",
			"2.65s 123 building",
			"3.65s 124 building",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("notifications\n got %q\nwant %q", got, want)
		}
	})
}

func TestAllowYield(t *testing.T) {
	if _, ok := YieldAllowed(context.Background()); ok {
		t.Fatal("a plain context allows yielding")
	}
	at := time.Unix(1000, 0)
	if got, ok := YieldAllowed(AllowYield(context.Background(), at)); !ok || !got.Equal(at) {
		t.Fatalf("YieldAllowed = %v, %v", got, ok)
	}
}
