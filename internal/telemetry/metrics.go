package telemetry

import (
	"context"
	"time"

	"github.com/dsh-go/dsh/internal/otlp"
)

// pusher sends the metrics every interval, and once more when stopped.
type pusher struct {
	t       *Telemetry
	c       *otlp.Client
	collect func() []otlp.Metric
	start   time.Time
	stopc   chan struct{}
	done    chan struct{}
	// ctx is the pushes' until stop, which cancels one under way: the
	// last push has the shutdown's time.
	ctx    context.Context
	cancel context.CancelFunc
}

// ExportMetrics sends what collect returns every OTEL_METRIC_EXPORT_INTERVAL
// and at Shutdown, when metrics are exported; it does nothing otherwise,
// and after the first call.
func (t *Telemetry) ExportMetrics(collect func() []otlp.Metric) {
	if !t.MetricsOn() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.metrics != nil {
		return
	}
	p := &pusher{t: t, c: t.client(t.settings.Metrics), collect: collect, start: time.Now(),
		stopc: make(chan struct{}), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	t.metrics = p
	go p.run(t.settings.MetricInterval)
}

func (p *pusher) run(every time.Duration) {
	defer close(p.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-p.stopc:
			return
		case <-tick.C:
			_ = p.push(p.ctx)
		}
	}
}

// push sends the metrics as they are now.
func (p *pusher) push(ctx context.Context) error {
	body := otlp.EncodeMetrics(p.t.res, p.t.scope, p.start, time.Now(), p.collect())
	return p.c.Post(ctx, body)
}

// stop ends the pushes, then sends the last values.
func (p *pusher) stop(ctx context.Context) error {
	close(p.stopc)
	p.cancel()
	<-p.done
	err := p.push(ctx)
	p.c.Close()
	return err
}
