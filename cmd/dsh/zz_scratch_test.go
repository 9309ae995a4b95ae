package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

func TestScratchFirstCall(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := setup("", dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := host.Standard(cfg, host.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, _ := json.Marshal(map[string]any{"command": "true", "description": "x"})
	var firsts, seconds, ends []time.Duration
	for i := range 60 {
		s := session.New(fmt.Sprint("s", i), dir)
		t0 := time.Now()
		st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: raw, Session: s})
		t1 := time.Now()
		st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: raw, Session: s})
		t2 := time.Now()
		s.End()
		t3 := time.Now()
		firsts, seconds, ends = append(firsts, t1.Sub(t0)), append(seconds, t2.Sub(t1)), append(ends, t3.Sub(t2))
	}
	med := func(d []time.Duration) time.Duration { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }); return d[len(d)/2] }
	t.Logf("first %v second %v end %v", med(firsts), med(seconds), med(ends))
}
