package ssh

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// Report is what dsh doctor says about the remote side.
type Report struct {
	// Host is host:port; User the remote user.
	Host string
	User string
	// Key is the login key's type, fingerprint and source ("ssh-ed25519
	// SHA256:… (SSH agent)"); HostKey the host's accepted key.
	Key     string
	HostKey string
	// Programs maps each program the executor runs remotely (sh, bash,
	// setsid; cat, mkdir, rm, ls and id for spill files) to its path, ""
	// when missing.
	Programs map[string]string
	// Missing lists the programs not found, in Programs' order.
	Missing []string
	// BashVersion is the remote bash's $BASH_VERSION.
	BashVersion string
	// SpillBase is the spill directory base (ssh.spillDir, else the
	// remote $TMPDIR or /tmp) without symlinks, once checked as a spill
	// checks it; SpillErr says why it is refused. Neither is set while a
	// program is missing.
	SpillBase string
	SpillErr  error
	// RoundTrip is the median round trip of a keep-alive; Call the median
	// time of a `true` through the wrapper.
	RoundTrip time.Duration
	Call      time.Duration
}

// programs are the remote programs the executor needs, in the order a
// report lists them: the wrapper's, then the spill files'.
var programs = []string{"sh", "bash", "setsid", "cat", "mkdir", "rm", "ls", "id"}

// probeScript prints where each program is and the remote bash's version.
const probeScript = `for p in "$@"; do printf '%s=%s\n' "$p" "$(command -v "$p")"; done
command -v bash >/dev/null && printf 'version=%s\n' "$(bash --noprofile --norc -c 'printf %s "$BASH_VERSION"')"`

// Check connects (as a command would) and reports the host, the login,
// the remote programs, the round trip of a keep-alive and of a `true`
// through the wrapper, and whether the spill directory base is safe. An error means the host could not be reached or
// logged in to.
func (e *Executor) Check(ctx context.Context) (Report, error) {
	rc, err := e.startRemote(ctx, true, probeScript, programs...)
	if err != nil {
		return Report{}, err
	}
	out, err := rc.wait()
	if err != nil {
		return Report{}, err
	}
	c := rc.s.c
	r := Report{Host: e.target.addr, User: e.target.user, Programs: map[string]string{}}
	if l := c.login; l != nil {
		r.Key = strings.TrimSpace(l.keyType + " " + l.fingerprint + " (" + l.source + ")")
		r.HostKey = l.hostKey
	}
	for line := range strings.SplitSeq(out, "\n") {
		k, v, _ := strings.Cut(line, "=")
		if k == "version" {
			r.BashVersion = v
		} else if slices.Contains(programs, k) {
			r.Programs[k] = v
		}
	}
	for _, p := range programs {
		if r.Programs[p] == "" {
			r.Missing = append(r.Missing, p)
		}
	}
	r.RoundTrip = median(5, func() error {
		_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
		return err
	})
	if len(r.Missing) == 0 {
		r.Call = median(3, func() error { return e.runTrue(ctx) })
		base, err := e.checkBase(ctx, true, e.spill.base)
		r.SpillBase, r.SpillErr = base.real, err
	}
	return r, nil
}

// runTrue runs `true` through the wrapper.
func (e *Executor) runTrue(ctx context.Context) error {
	spec, err := e.Resolve(bash.Request{Command: "true"})
	if err != nil {
		return err
	}
	_, err = bash.Run(ctx, e, spec)
	return err
}

// median times f n times and returns the median of the runs that
// succeeded, 0 when none did.
func median(n int, f func() error) time.Duration {
	var times []time.Duration
	for range n {
		begin := time.Now()
		if f() == nil {
			times = append(times, time.Since(begin))
		}
	}
	if len(times) == 0 {
		return 0
	}
	slices.Sort(times)
	return times[len(times)/2]
}
