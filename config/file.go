package config

import (
	"errors"
	"slices"
	"time"

	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/redact"
)

// The executors and tools a file can name.
const (
	ExecutorLocal = "local"
	ExecutorSSH   = "ssh"

	ToolBash  = "bash"
	ToolTasks = "tasks"
)

var (
	executors = []string{ExecutorLocal, ExecutorSSH}
	toolNames = []string{ToolBash, ToolTasks}
)

// redactAll is the mode of a maintained scanner's full rule set: none
// redacts a 64 KB tail within the 2 ms budget (docs/spec.md §14), so a
// file that asks for it is told why, not that the mode is unknown.
const redactAll = "all"

// File is the whole configuration file (docs/config.md). Its zero value is
// the default configuration; [File.WithDefaults] spells the defaults out.
type File struct {
	// Executor names the executor: "local" (default) or "ssh".
	Executor string `yaml:"executor,omitempty"`
	// Local is the local executor's section.
	Local Local `yaml:"local,omitempty"`
	// SSH is the SSH executor's section; set only with executor ssh.
	SSH SSH `yaml:"ssh,omitempty"`
	// Tools lists the tools to load, "bash" and "tasks", in the
	// order given. nil means both; an empty list loads none.
	Tools []string `yaml:"tools"`
	// Bash is the bash tool's section.
	Bash Bash `yaml:"bash,omitempty"`
	// Tasks is the section of the task runtime and the task tools.
	Tasks Tasks `yaml:"tasks,omitempty"`
	// Permissions is the command policy; nil: its defaults, so only the
	// rules of Claude Code's settings files apply (docs/spec.md §9.1).
	Permissions *Permissions `yaml:"permissions,omitempty"`
	// Hooks are hook commands run around tool calls.
	Hooks Hooks `yaml:"hooks,omitempty"`
	// ClaudeHooks also loads the hooks of Claude Code's settings files;
	// TrustProjectHooks those of the project's .claude/ files as well.
	ClaudeHooks       bool `yaml:"claudeHooks,omitempty"`
	TrustProjectHooks bool `yaml:"trustProjectHooks,omitempty"`
	// Serve is the section of dsh serve (MCP over HTTP).
	Serve Serve `yaml:"serve,omitempty"`
	// Audit is the audit log (docs/spec.md §15); off unless it names a
	// path.
	Audit Audit `yaml:"audit,omitempty"`
	// Redact says which secrets in model-facing text are replaced
	// (docs/spec.md §14): "known" (default) or "off". "all" is refused:
	// no scanner's full rule set fits the budget.
	Redact string `yaml:"redact,omitempty"`
	// Otel exports traces, logs and metrics over OTLP/HTTP (docs/spec.md
	// §15.5); off unless it or the OTEL_EXPORTER_OTLP_* variables name a
	// receiver.
	Otel Otel `yaml:"otel,omitempty"`
}

// Audit is the audit log's section.
type Audit struct {
	// Path is the file the JSON lines are appended to (created with mode
	// 0600), AuditStderr for dsh's standard error or AuditSyslog for the
	// local syslog daemon; "" means no audit log. A relative path is
	// relative to dsh's working directory.
	Path string `yaml:"path,omitempty"`
}

// AuditStderr is the audit path that means standard error.
const AuditStderr = "-"

// AuditSyslog is the audit path that means the local syslog daemon.
const AuditSyslog = "syslog"

// IsFile reports whether the audit log is a file (not off, standard
// error or syslog): sandboxed commands must not see it.
func (a Audit) IsFile() bool {
	return a.Path != "" && a.Path != AuditStderr && a.Path != AuditSyslog
}

// Bash is the bash tool's section.
type Bash struct {
	// EnableRunInBackground offers run_in_background to the model. nil
	// means true when the task tools are loaded, else false.
	EnableRunInBackground *bool `yaml:"enableRunInBackground,omitempty"`
	// MaxForegroundPerSession caps the foreground commands one session
	// runs at once (default 16); a call over it is refused.
	MaxForegroundPerSession int `yaml:"maxForegroundPerSession,omitempty"`
	// MaxForeground caps the foreground commands of all sessions together
	// (default 128).
	MaxForeground int `yaml:"maxForeground,omitempty"`
	// YieldAfter is how long a foreground call waits before its command
	// goes on as a background task (docs/spec.md §12): nil means
	// DefaultYieldAfter, 0 never. Only front ends that allow it yield
	// (MCP), and only with background runs on.
	YieldAfter *time.Duration `yaml:"yieldAfterMs,omitempty"`
}

// DefaultYieldAfter is bash.yieldAfterMs's default: under the 60 s
// request timeout common among MCP clients.
const DefaultYieldAfter = 50 * time.Second

// YieldDelay is the effective YieldAfter: the default when unset, 0 when
// yielding is off.
func (b Bash) YieldDelay() time.Duration {
	if b.YieldAfter == nil {
		return DefaultYieldAfter
	}
	return *b.YieldAfter
}

// Serve is the section of dsh serve; the other front ends ignore it.
// Zero values take the defaults.
type Serve struct {
	// MaxSessions caps the MCP sessions open at once (default 64): a new
	// one over it is refused with 503.
	MaxSessions int `yaml:"maxSessions,omitempty"`
	// MaxRequestBytes caps one request body (default 8 MiB): larger ones
	// get 413.
	MaxRequestBytes int64 `yaml:"maxRequestBytes,omitempty"`
	// IdleSession ends a session that made no tool call this long after
	// its initialize (default 5 minutes); one that called once ends after
	// --idle-timeout.
	IdleSession time.Duration `yaml:"idleSessionMs,omitempty"`
}

// Defaults of [Serve].
const (
	DefaultMaxSessions     = 64
	DefaultMaxRequestBytes = 8 << 20
	DefaultIdleSession     = 5 * time.Minute
)

// counts lists the count keys of v.
func (v *Serve) counts() []countKey {
	return []countKey{{"maxSessions", &v.MaxSessions, DefaultMaxSessions}}
}

// numeric lists the numeric keys of v.
func (v *Serve) numeric() []numKey {
	return []numKey{
		byteKey("maxRequestBytes", &v.MaxRequestBytes, DefaultMaxRequestBytes),
		msKey("idleSessionMs", &v.IdleSession, DefaultIdleSession),
	}
}

// WithDefaults returns v with its zero values set to the defaults.
func (v Serve) WithDefaults() Serve {
	defaultCounts(v.counts())
	defaultNumbers(v.numeric())
	return v
}

// Validate refuses a negative session limit, request size or idle time,
// with the key relative to the section.
func (v Serve) Validate() error {
	if err := checkCounts(v.counts()); err != nil {
		return err
	}
	return checkNumbers(v.numeric())
}

// Defaults of [Bash].
const (
	DefaultMaxForegroundPerSession = 16
	DefaultMaxForeground           = 128
)

// counts lists the count keys of b.
func (b *Bash) counts() []countKey {
	return []countKey{
		{"maxForegroundPerSession", &b.MaxForegroundPerSession, DefaultMaxForegroundPerSession},
		{"maxForeground", &b.MaxForeground, DefaultMaxForeground},
	}
}

// WithDefaults returns b with its zero limits set to the defaults
// (EnableRunInBackground depends on the tools: see [File.WithDefaults]).
func (b Bash) WithDefaults() Bash {
	defaultCounts(b.counts())
	return b
}

// Validate refuses a negative limit or yieldAfterMs, with its key
// relative to the section.
func (b Bash) Validate() error {
	if b.YieldAfter != nil && *b.YieldAfter < 0 {
		return errNonNegative("yieldAfterMs", 0)
	}
	return checkCounts(b.counts())
}

// Background reports whether background runs are on: true unless set to
// false.
func (b Bash) Background() bool { return b.EnableRunInBackground == nil || *b.EnableRunInBackground }

// Tasks is the section of the task runtime and task_output, task_list and
// task_kill. Zero values take the defaults.
type Tasks struct {
	// MaxRunningPerSession caps one session's live background tasks
	// (default 64).
	MaxRunningPerSession int `yaml:"maxRunningPerSession,omitempty"`
	// MaxRunning caps the live background tasks of all sessions together
	// (default 256).
	MaxRunning int `yaml:"maxRunning,omitempty"`
	// WaitTimeout is task_output's default wait (default 30 s).
	WaitTimeout time.Duration `yaml:"waitTimeoutMs,omitempty"`
	// MaxWaitTimeout caps task_output's waits (default 10 minutes).
	MaxWaitTimeout time.Duration `yaml:"maxWaitTimeoutMs,omitempty"`
}

// Defaults of [Tasks].
const (
	DefaultMaxRunningPerSession = 64
	DefaultMaxRunning           = 256
	DefaultWaitTimeout          = 30 * time.Second
	DefaultMaxWaitTimeout       = 10 * time.Minute
)

// Has reports whether f loads the named tools.
func (f File) Has(tool string) bool {
	return f.Tools == nil || slices.Contains(f.Tools, tool)
}

// WithDefaults returns f with every default spelled out: the executor, the
// tool list, background runs (on exactly when the task tools are loaded,
// unless set), yieldAfterMs, and each section's own defaults (the ssh section's only
// with executor ssh, and local.sandbox's only without it: the other must
// stay empty); local.sandbox.mode defaults to auto here. Call it on a File that passed [File.Validate].
func (f File) WithDefaults() File {
	if f.Executor == "" {
		f.Executor = ExecutorLocal
	}
	if f.Tools == nil {
		f.Tools = slices.Clone(toolNames)
	}
	if f.Bash.EnableRunInBackground == nil {
		bg := f.Has(ToolTasks)
		f.Bash.EnableRunInBackground = &bg
	}
	if f.Bash.YieldAfter == nil {
		d := DefaultYieldAfter
		f.Bash.YieldAfter = &d
	}
	sandbox := f.Local.Sandbox
	if f.Local.Sandbox.Mode == "" {
		// Safe by default (docs/spec.md §11): the sandbox is on
		// wherever a backend works.
		f.Local.Sandbox.Mode = SandboxAuto
	}
	if f.Local.Sandbox.Network == nil {
		// Network by domain (docs/spec.md §11.1), each unknown host asked.
		f.Local.Sandbox.Network = DefaultNetwork()
	}
	f.Bash = f.Bash.WithDefaults()
	f.Local = f.Local.WithDefaults()
	if f.Executor == ExecutorSSH {
		f.SSH = f.SSH.WithDefaults()
		// The sandbox is the local executor's: it stays unset, as
		// Validate requires.
		f.Local.Sandbox = sandbox
	}
	f.Tasks = f.Tasks.WithDefaults()
	f.Serve = f.Serve.WithDefaults()
	if f.Redact == "" {
		f.Redact = redact.Known
	}
	if f.Permissions != nil {
		p := f.Permissions.WithDefaults()
		f.Permissions = &p
	}
	return f
}

// Validate reports the first value of f that no default can repair, naming
// its key from the top of the file ("local.graceMs must be a positive
// finite number"). [Parse] has already called it on what it returns.
func (f File) Validate() error { return f.validate(nil) }

// validate is Validate with the lines of the keys, when f came from a file.
func (f File) validate(lines map[string]int) error {
	if f.Executor != "" && !slices.Contains(executors, f.Executor) {
		return errOneOf("executor", f.Executor, lines["executor"], executors)
	}
	if err := checkRedact(f.Redact, lines["redact"]); err != nil {
		return err
	}
	for i, name := range f.Tools {
		if err := checkTool(f.Tools[:i], name, toolKey(i), lines[toolKey(i)]); err != nil {
			return err
		}
	}
	type section struct {
		name string
		err  error
	}
	sections := []section{{"local", f.Local.Validate()}, {"ssh", f.SSH.Validate()}, {"bash", f.Bash.Validate()}, {"tasks", f.Tasks.Validate()}, {"serve", f.Serve.Validate()}, {"hooks", f.Hooks.Validate()}, {"otel", f.Otel.Validate()}}
	if f.Permissions != nil {
		sections = append(sections, section{"permissions", f.Permissions.Validate()})
	}
	for _, s := range sections {
		var e *Error
		if errors.As(s.err, &e) {
			return e.within(s.name, lines)
		}
	}
	if err := f.checkExecutor(lines); err != nil {
		return err
	}
	if bg := f.Bash.EnableRunInBackground; bg != nil && *bg && f.Has(ToolBash) && !f.Has(ToolTasks) {
		// The model could start tasks it can neither read nor stop.
		const key = "bash.enableRunInBackground"
		return keyErr(key, lines[key], "needs the task tools: add %q to tools", ToolTasks)
	}
	return nil
}

// checkExecutor checks that the ssh section and the executor agree: with
// executor ssh the section must name a host and there must be no
// local.sandbox section (docs/spec.md §13: it confines local commands
// only, and a user reading it would believe remote ones confined);
// without executor ssh the ssh section must be empty, since commands would
// silently run on this machine.
func (f File) checkExecutor(lines map[string]int) error {
	switch {
	case f.Executor == ExecutorSSH && f.SSH.Host == "":
		line := lines["ssh"]
		if line == 0 {
			line = lines["executor"]
		}
		return keyErr("ssh.host", line, "must be set with executor: ssh")
	case f.Executor == ExecutorSSH && !f.Local.Sandbox.IsZero():
		return keyProblem("local.sandbox", lines["local.sandbox"],
			"the executor is ssh, and the sandbox confines only commands of the local executor: remove the section")
	case f.Executor != ExecutorSSH && !f.SSH.isZero():
		return keyProblem("ssh", lines["ssh"], "the executor is local: set executor: ssh to run commands over SSH")
	}
	return nil
}

// checkRedact checks the redact key: one of the modes package redact
// accepts, which the error lists (and only those); "all", which no scanner
// can back within the budget, is refused with its reason.
func checkRedact(mode string, line int) error {
	switch {
	case mode == "":
		return nil
	case mode == redactAll:
		return keyProblem("redact", line, `"all" is not available: no maintained scanner's rule set redacts a 64 KB tail within 2 ms; use known`)
	case !slices.Contains(redact.Modes(), mode):
		return errOneOf("redact", mode, line, redact.Modes())
	}
	return nil
}

// checkTool checks the tool name at key, given the names before it.
func checkTool(before []string, name, key string, line int) error {
	switch {
	case !slices.Contains(toolNames, name):
		return errOneOf(key, name, line, toolNames)
	case slices.Contains(before, name):
		return keyErr(key, line, "%q is listed twice", name)
	}
	return nil
}

// WithDefaults returns t with its zero values set to the defaults.
func (t Tasks) WithDefaults() Tasks {
	if t.MaxRunningPerSession == 0 {
		t.MaxRunningPerSession = DefaultMaxRunningPerSession
	}
	if t.MaxRunning == 0 {
		t.MaxRunning = DefaultMaxRunning
	}
	if t.WaitTimeout == 0 {
		t.WaitTimeout = DefaultWaitTimeout
	}
	if t.MaxWaitTimeout == 0 {
		t.MaxWaitTimeout = DefaultMaxWaitTimeout
	}
	return t
}

// Validate reports the first value of t that no default can repair, with
// its key relative to the section: a negative running limit or wait, and
// a default wait above the cap once the defaults apply ("waitTimeoutMs
// (30000) exceeds maxWaitTimeoutMs (1000)").
func (t Tasks) Validate() error {
	for _, n := range []struct {
		key string
		v   int
	}{{"maxRunningPerSession", t.MaxRunningPerSession}, {"maxRunning", t.MaxRunning}} {
		if n.v < 0 {
			return errType(n.key, "a positive integer", 0)
		}
	}
	if err := checkNumbers([]numKey{
		msKey("waitTimeoutMs", &t.WaitTimeout, 0), msKey("maxWaitTimeoutMs", &t.MaxWaitTimeout, 0),
	}); err != nil {
		return err
	}
	if d := t.WithDefaults(); d.WaitTimeout > d.MaxWaitTimeout {
		e := keyErr("waitTimeoutMs", 0, "(%s) exceeds", num.MillisText(d.WaitTimeout))
		e.other, e.tail = "maxWaitTimeoutMs", " ("+num.MillisText(d.MaxWaitTimeout)+")"
		return e
	}
	return nil
}
