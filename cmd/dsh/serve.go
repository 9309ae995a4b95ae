package main

// The MCP front ends, dsh mcp and dsh serve; the package documentation
// describes them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/guard"
	"github.com/dsh-go/dsh/internal/metrics"
	"github.com/dsh-go/dsh/mcpserver"
)

// tokenEnv is the environment variable holding dsh serve's bearer token.
const tokenEnv = "DSH_TOKEN"

const (
	defaultIdleTimeout = 30 * time.Minute
	// shutdownGrace bounds http.Server.Shutdown: streams that stay open
	// (an SSE GET) would otherwise hold it forever.
	shutdownGrace = 5 * time.Second
)

func init() {
	extraCommands = append(extraCommands, newMCPCmd, newServeCmd)
}

// mcpTerminalHint is the line dsh mcp prints on stderr when its stdin is a
// terminal, before it serves as usual: a person who started it by hand is
// told what it is and how to try it (exact, docs/spec.md §6.1).
const mcpTerminalHint = `dsh: dsh mcp speaks MCP (JSON-RPC) on stdin/stdout for an MCP client, not a person: ` +
	`try it with npx @modelcontextprotocol/inspector dsh mcp, or add it to a client (README: "Adding dsh to an MCP client"); Ctrl-D ends it`

func newMCPCmd(s streams) *cobra.Command {
	var configPath, workdir string
	var level func() (slog.Level, error)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			lv, err := level()
			if err != nil {
				return err
			}
			fe, err := startFrontEnd(configPath, workdir, lv, s, nil)
			if err != nil {
				return err
			}
			defer fe.close()
			if isTerminal(os.Stdin) {
				// Once the config is good: a usage error stays its one line.
				fmt.Fprintln(s.err, mcpTerminalHint)
			}
			if err := fe.srv.RunStdio(fe.ctx); err != nil && !errors.Is(err, io.EOF) {
				return failure("mcp: %v", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "", configFlagHelp)
	fl.StringVar(&workdir, "workdir", "", "working directory of every session (default: the client's first root, else the current directory)")
	level = addLogLevel(cmd)
	return cmd
}

type serveFlags struct {
	config, workdir string
	addr, tokenFile string
	noAuth          bool
	idleTimeout     time.Duration
	metricsAddr     string
	metricsNoAuth   bool
	drainTimeout    time.Duration
	level           func() (slog.Level, error)
}

// defaultDrainTimeout is --drain-timeout's default (docs/spec.md §15.3).
const defaultDrainTimeout = 30 * time.Second

func newServeCmd(s streams) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --addr HOST:PORT|unix:PATH",
		Short: "Serve MCP over streamable HTTP at /mcp",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return serve(f, s)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "", "address to listen on, HOST:PORT or unix:PATH (a socket only you can open; no token needed) (required)")
	fl.StringVar(&f.config, "config", "", configFlagHelp)
	fl.StringVar(&f.workdir, "workdir", "", "working directory of every session (default: the client's first root, else the current directory)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token (default: $"+tokenEnv+")")
	fl.BoolVar(&f.noAuth, "no-auth", false, "serve without a token; only on a loopback address")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", defaultIdleTimeout, "end a session idle for this long (0: never)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "also serve /metrics, /healthz and /readyz on this HOST:PORT; /metrics needs no token there when HOST is loopback")
	fl.BoolVar(&f.metricsNoAuth, "metrics-no-auth", false, "serve /metrics on a non-loopback --metrics-addr without the token")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", defaultDrainTimeout, "on SIGTERM, wait this long for running calls and tasks before ending the sessions")
	f.level = addLogLevel(cmd)
	return cmd
}

// serve runs dsh serve, in the order of its steps: check the flags, start
// the stack, open both listeners, serve until a signal, a drain or a
// failed listener, and shut down.
func serve(f serveFlags, s streams) error {
	c, err := f.check()
	if err != nil {
		return err
	}
	drain := make(chan struct{})
	fe, err := startFrontEnd(f.config, f.workdir, c.level, s, drain, hideOwnFiles(f.tokenFile, c.addr.socket))
	if err != nil {
		return err
	}
	if f.noAuth && c.addr.socket == "" {
		// Once the config is good: a usage error stays its one line.
		fmt.Fprintln(s.err, noAuthWarning(f.addr))
	}
	defer fe.close()
	sv, err := listenServers(fe, f, c)
	if err != nil {
		return err
	}
	sv.start(fe, c)
	err = sv.wait(fe, drain, f.drainTimeout)
	sv.stop(fe)
	// The deferred close ends the sessions, then the app.
	return err
}

// serveChecked is what serve's flags say once checked.
type serveChecked struct {
	level             slog.Level
	addr, metricsAddr serveAddr
	token             string
}

// check refuses flags that contradict each other or leave the server
// open, before anything starts.
func (f serveFlags) check() (serveChecked, error) {
	var c serveChecked
	if f.addr == "" {
		return c, usageError("serve: --addr HOST:PORT is required")
	}
	var err error
	if c.level, err = f.level(); err != nil {
		return c, err
	}
	if c.addr, err = parseAddr(f.addr); err != nil {
		return c, err
	}
	if f.idleTimeout < 0 {
		return c, usageError("serve: --idle-timeout must not be negative, got %v", f.idleTimeout)
	}
	if c.token, err = serveToken(f.tokenFile); err != nil {
		return c, err
	}
	if err := checkAuth(c.addr, c.token, f.noAuth); err != nil {
		return c, err
	}
	if f.noAuth {
		// Commands share the host's network, loopback included: without
		// a token, any of them could drive this server.
		if cfg, err := loadConfig(f.config); err == nil && cfg.Local.Sandbox.On() && cfg.Local.Sandbox.Network.ReachesHostLoopback() {
			return c, usageError("serve: --no-auth is refused while sandboxed commands may reach the host's loopback (local.sandbox.network): they could drive this server")
		}
	}
	if f.drainTimeout < 0 {
		return c, usageError("serve: --drain-timeout must not be negative, got %v", f.drainTimeout)
	}
	c.metricsAddr, err = checkMetricsAddr(f.metricsAddr, c.token, f.metricsNoAuth)
	return c, err
}

// servers are dsh serve's HTTP servers and their listeners: MCP's, and
// the metrics one when --metrics-addr is given (else nil).
type servers struct {
	mcp, metrics *http.Server
	ln, mln      net.Listener
	url          string
	// served gets what each Serve returned; running counts the Serves
	// that have not sent yet.
	served  chan error
	running int
}

// listenServers makes the servers and opens both listeners before either
// serves: when the metrics listener fails, the MCP one is closed again
// and nothing was served.
func listenServers(fe *frontEnd, f serveFlags, c serveChecked) (*servers, error) {
	m := fe.metrics()
	hs, err := fe.srv.HTTPServer(mcpserver.HTTPOptions{
		Token: c.token, NoAuth: c.token == "", IdleTimeout: f.idleTimeout,
		MaxSessions: fe.cfg.Serve.MaxSessions, MaxRequestBytes: fe.cfg.Serve.MaxRequestBytes,
		FirstCallTimeout: fe.cfg.Serve.IdleSession,
		Metrics:          m.Handler(),
	})
	if err != nil {
		return nil, failure("serve: %v", err)
	}
	sv := &servers{mcp: hs, served: make(chan error, 2)}
	if sv.ln, sv.url, err = c.addr.listen(fe.log); err != nil {
		return nil, failure("serve: %v", err)
	}
	if c.metricsAddr.tcp == "" {
		return sv, nil
	}
	if sv.mln, err = net.Listen("tcp", c.metricsAddr.tcp); err != nil {
		_ = sv.ln.Close()
		return nil, failure("serve: --metrics-addr: %v", err)
	}
	// The same guards as the main listener's: a flood of idle
	// connections here must not take what sessions and commands need.
	sv.metrics = fe.srv.HealthServer(m.Handler(), c.token, c.token == "" || f.metricsNoAuth || isLoopback(c.metricsAddr.host), 0)
	return sv, nil
}

// start serves on the listeners, each server from a goroutine of its
// own, which ends when the server is shut down or its listener fails.
func (sv *servers) start(fe *frontEnd, c serveChecked) {
	log, running := fe.log, fe.commandsRunning
	sv.running++
	go func() { sv.served <- sv.mcp.Serve(reserveFDs(sv.ln, "mcp", running, log)) }()
	if c.addr.socket != "" {
		log.Info("dsh serving MCP", "socket", c.addr.socket, "url", sv.url, "auth", c.token != "")
	} else {
		log.Info("dsh serving MCP", "url", sv.url, "auth", c.token != "")
	}
	if fe.cfg.Executor != config.ExecutorSSH && !fe.cfg.Local.Sandbox.On() {
		log.Warn(notIsolated)
	}
	if sv.metrics != nil {
		sv.running++
		go func() { sv.served <- sv.metrics.Serve(reserveFDs(sv.mln, "metrics", running, log)) }()
		log.Info("dsh serving metrics", "url", "http://"+sv.mln.Addr().String()+"/metrics")
	}
}

// wait returns when the servers are to stop: a signal, a drain that ended
// (nil), or a server whose listener failed (its error).
func (sv *servers) wait(fe *frontEnd, drain <-chan struct{}, drainTimeout time.Duration) error {
	select {
	case err := <-sv.served:
		// Serve ended without a shutdown: a listener failed.
		sv.running--
		return failure("serve: %v", err)
	case <-fe.ctx.Done():
	case <-drain:
		fe.drain(drainTimeout)
	}
	fe.log.Info("shutting down", "signal", fmt.Sprint(fe.received()))
	return nil
}

// stop ends the calls, the sessions and the servers, and waits for the
// servers' goroutines.
func (sv *servers) stop(fe *frontEnd) {
	// At once: a call still running is cut and returns `Error: command
	// aborted` before its session ends (a drain waited for them, or cut
	// them already).
	fe.abortCalls()
	// The sessions first: their open event streams would hold Shutdown
	// for its whole grace.
	fe.srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, srv := range []*http.Server{sv.mcp, sv.metrics} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(sctx); err != nil {
			fe.log.Warn("closing the connections still open", "err", err)
			srv.Close()
		}
	}
	for ; sv.running > 0; sv.running-- {
		<-sv.served // http.ErrServerClosed, or a listener's error
	}
}

// checkMetricsAddr reads --metrics-addr: HOST:PORT. Off loopback, /metrics
// there needs the token, so one is required unless --metrics-no-auth.
func checkMetricsAddr(addr, token string, noAuth bool) (serveAddr, error) {
	if addr == "" {
		if noAuth {
			return serveAddr{}, usageError("serve: --metrics-no-auth needs --metrics-addr")
		}
		return serveAddr{}, nil
	}
	if strings.HasPrefix(addr, unixPrefix) {
		return serveAddr{}, usageError("serve: --metrics-addr must be HOST:PORT, not a socket")
	}
	a, err := parseAddr(addr)
	if err != nil {
		return serveAddr{}, usageError("serve: --metrics-addr %s: %v", addr, err)
	}
	if token == "" && !noAuth && !isLoopback(a.host) {
		return serveAddr{}, usageError("serve: --metrics-addr %s is not loopback and there is no token: give --metrics-no-auth to serve /metrics there to anyone", addr)
	}
	return a, nil
}

// checkAuth refuses what the token and --no-auth leave unclear or open:
// both at once, neither on TCP, and no token on an address other users of
// other machines can reach. A Unix socket needs no token: only its owner
// can open it.
func checkAuth(addr serveAddr, token string, noAuth bool) error {
	switch {
	case token != "" && noAuth:
		return usageError("serve: --no-auth given but a token is set (%s or --token-file): drop one", tokenEnv)
	case addr.socket != "":
		return nil
	case token == "" && !noAuth:
		return usageError("serve: no bearer token: set %s or --token-file (or --no-auth on a loopback address, or --addr unix:PATH)", tokenEnv)
	case noAuth && !isLoopback(addr.host):
		return usageError("serve: --no-auth is allowed only on a loopback address (127.0.0.0/8, ::1, localhost), not %q", addr.tcp)
	}
	return nil
}

// frontEnd is what dsh mcp and dsh serve both start from: the config, a
// logger on stderr, a context cancelled by SIGINT/SIGTERM, the app and the
// MCP server over it.
type frontEnd struct {
	cfg      config.File
	log      *slog.Logger
	ctx      context.Context
	received func() os.Signal
	stop     func()
	stack    *host.Stack
	srv      *mcpserver.Server
	m        *metrics.Metrics // fe.metrics()'s, made once
}

// With drain set, the first SIGTERM closes it instead of cancelling the
// context (dsh serve drains).
func startFrontEnd(configPath, workdir string, level slog.Level, s streams, drain chan struct{}, opts ...host.Option) (*frontEnd, error) {
	cfg, wd, err := setup(configPath, workdir)
	if err != nil {
		return nil, err
	}
	fe := &frontEnd{cfg: cfg, log: newLevelLogger(s.err, level)}
	fe.ctx, fe.received, fe.stop = drainSignals(context.Background(), drain)
	// The sandbox hides the config file's directory (docs/spec.md §11).
	opts = append(opts, host.WithConfigFile(configPath), host.WithLogger(fe.log), host.WithVersion(buildVersion))
	if fe.stack, err = host.Standard(cfg, opts...); err != nil {
		fe.stop()
		return nil, stackError(err)
	}
	fe.cfg.Local.Sandbox = appliedSandbox(fe.cfg, fe.stack)
	warnSelf(fe.cfg, fe.log)
	fe.srv = mcpserver.New(serverOptions(fe.stack, wd, cfg, fe.log))
	if t := fe.stack.Telemetry; t.MetricsOn() {
		t.ExportMetrics(fe.metrics().OTLP)
	}
	return fe, nil
}

// appliedSandbox is cfg's sandbox as it applies in st: mode auto resolved
// by what the executor found here.
func appliedSandbox(cfg config.File, st *host.Stack) config.Sandbox {
	if st.Local == nil {
		return cfg.WithDefaults().Local.Sandbox.Resolved(false)
	}
	return st.Local.Applied(cfg.WithDefaults().Local.Sandbox)
}

// close ends the sessions (and their tasks), then the stack, then stops
// watching for signals.
func (fe *frontEnd) close() {
	fe.srv.Close()
	closeStack(fe.stack, fe.log)
	fe.stop()
}

// hideOwnFiles hides dsh serve's token file and Unix socket from
// sandboxed commands (docs/spec.md §11): a command that reached the
// socket could open an MCP session of its own and ask to leave the
// sandbox, then answer the question itself. Each by its absolute path:
// the sandbox's cwd is the command's, not dsh's.
func hideOwnFiles(tokenFile, socket string) host.Option {
	var paths []string
	for _, p := range []string{tokenFile, socket} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		paths = append(paths, p)
	}
	return host.WithHidden(paths...)
}

// serveToken reads the token: --token-file, else $DSH_TOKEN; "" when
// neither is set. A token shorter than mcpserver.MinTokenLength, and a
// token file that group or others may read or write (as ssh refuses such
// a private key), are refused.
func serveToken(file string) (string, error) {
	if file == "" {
		token := strings.TrimSpace(guard.Getenv(tokenEnv))
		if token == "" {
			return "", nil
		}
		if err := mcpserver.CheckToken(token); err != nil {
			return "", usageError("serve: %s: %v", tokenEnv, err)
		}
		return token, nil
	}
	data, err := readPrivateFile(file)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(data))
	switch {
	case token == "":
		return "", usageError("serve: --token-file %s is empty", file)
	case strings.ContainsAny(token, "\r\n"):
		return "", usageError("serve: --token-file %s must hold one line", file)
	}
	if err := mcpserver.CheckToken(token); err != nil {
		return "", usageError("serve: --token-file %s: %v", file, err)
	}
	return token, nil
}

// readPrivateFile reads the token file, refusing it when group or others
// have any access to it. The mode is that of the file opened, not of a
// path that could change between a check and the read.
func readPrivateFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usageError("serve: --token-file %s: %v", file, pathErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, usageError("serve: --token-file %s: %v", file, pathErr(err))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, usageError("serve: --token-file %s: permissions %04o are too open (group or others have access): chmod 600 %s", file, perm, file)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, usageError("serve: --token-file %s: %v", file, pathErr(err))
	}
	return data, nil
}

// pathErr is err without the operation and path of an *os.PathError,
// which the messages name themselves.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isLoopback reports whether host names only this machine: localhost or an
// address in 127.0.0.0/8 or ::1. An empty host (all interfaces) is not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serverOptions(st *host.Stack, workdir string, cfg config.File, log *slog.Logger) mcpserver.Options {
	v := buildVersion()
	// When the last session is gone, give the memory the sessions used back
	// to the system (otherwise the runtime keeps it for minutes).
	return mcpserver.Options{
		Tools: st.Tools, Prompt: st.Prompt, Workdir: workdir, DefaultCwd: defaultCwd(cfg),
		Remote:  cfg.Executor == config.ExecutorSSH,
		Version: v, Logger: log, OnIdle: debug.FreeOSMemory,
	}
}
