package gateway

import (
	"context"
	"errors"
	"time"
)

// ErrDismissed is what a Caller's Ask returns when the user closed the
// question without an answer: the connection is refused, nothing is
// remembered. Any other error means nobody could be asked.
var ErrDismissed = errors.New("the question was dismissed")

// Answers of the user, in Record.Rule.
const (
	ruleAccepted  = "ask:accepted"
	ruleDeclined  = "ask:declined"
	ruleDismissed = "ask:dismissed"
)

// defaultAskTimeout is permissions.askTimeoutMs's default.
const defaultAskTimeout = 5 * time.Minute

// decide decides a connection to host:port by the rules, asking the user
// when they say ask: whether it may go, and what decided.
func (g *Gateway) decide(caller Caller, host string, port int) (bool, string) {
	verdict, rule := g.cfg.Rules.Decide(host, port)
	switch verdict {
	case Allow:
		return true, rule
	case Ask:
		return g.ask(caller, host, port)
	}
	return false, rule
}

// ask asks the user about host:port once per session: the answer is
// remembered, and connections to the same host:port while the question
// is open wait for it. A question nobody can answer is decided by
// askFallback, a dismissed one refuses; neither is remembered.
func (g *Gateway) ask(caller Caller, host string, port int) (bool, string) {
	key := hostPort(host, port)
	g.mu.Lock()
	if v, ok := g.remembered[key]; ok {
		g.mu.Unlock()
		return v, answerRule(v)
	}
	if p := g.asking[key]; p != nil {
		g.mu.Unlock()
		select {
		case <-p.done:
			return p.allowed, p.rule
		case <-g.ctx.Done():
			return false, ruleDismissed
		}
	}
	p := &pending{done: make(chan struct{})}
	g.asking[key] = p
	g.mu.Unlock()

	p.allowed, p.rule = g.askUser(caller, host, port)
	g.mu.Lock()
	if p.rule == ruleAccepted || p.rule == ruleDeclined {
		g.remembered[key] = p.allowed
	}
	delete(g.asking, key)
	g.mu.Unlock()
	close(p.done)
	return p.allowed, p.rule
}

func answerRule(allowed bool) string {
	if allowed {
		return ruleAccepted
	}
	return ruleDeclined
}

// askUser puts the question to the caller's user.
func (g *Gateway) askUser(caller Caller, host string, port int) (bool, string) {
	if caller.Ask == nil {
		return g.fallback()
	}
	timeout := g.cfg.AskTimeout
	if timeout <= 0 {
		timeout = defaultAskTimeout
	}
	ctx, cancel := context.WithTimeout(g.ctx, timeout)
	defer cancel()
	if caller.Done != nil {
		// The question goes when its command does.
		go func() {
			select {
			case <-caller.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	// One question of the session at a time: a command cannot flood the
	// user with questions; the wait counts against the timeout.
	select {
	case g.questions <- struct{}{}:
		defer func() { <-g.questions }()
	case <-ctx.Done():
		return false, ruleDismissed
	}
	accepted, err := caller.Ask(ctx, host, port)
	switch {
	case err == nil:
		return accepted, answerRule(accepted)
	case ctx.Err() != nil, errors.Is(err, ErrDismissed):
		return false, ruleDismissed
	}
	return g.fallback()
}

// fallback is askFallback's decision, when nobody can be asked.
func (g *Gateway) fallback() (bool, string) {
	if g.cfg.AskFallback == Allow {
		return true, "askFallback: allow"
	}
	return false, "askFallback: deny"
}
