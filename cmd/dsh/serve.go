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
			if err := fe.srv.RunStdio(fe.ctx); err != nil && !errors.Is(err, io.EOF) {
				return failure("mcp: %v", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "", "config file (YAML)")
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
	fl.StringVar(&f.config, "config", "", "config file (YAML)")
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

func serve(f serveFlags, s streams) error {
	if f.addr == "" {
		return usageError("serve: --addr HOST:PORT is required")
	}
	level, err := f.level()
	if err != nil {
		return err
	}
	addr, err := parseAddr(f.addr)
	if err != nil {
		return err
	}
	if f.idleTimeout < 0 {
		return usageError("serve: --idle-timeout must not be negative, got %v", f.idleTimeout)
	}
	token, err := serveToken(f.tokenFile)
	if err != nil {
		return err
	}
	if err := checkAuth(addr, token, f.noAuth); err != nil {
		return err
	}
	if f.noAuth {
		// Commands share the host's network, loopback included: without
		// a token, any of them could drive this server.
		if cfg, err := loadConfig(f.config); err == nil && cfg.Local.Sandbox.On() && cfg.Local.Sandbox.Network {
			return usageError("serve: --no-auth is refused with local.sandbox.network: true: commands could reach this server on loopback")
		}
	}
	if f.drainTimeout < 0 {
		return usageError("serve: --drain-timeout must not be negative, got %v", f.drainTimeout)
	}
	metricsAddr, err := checkMetricsAddr(f.metricsAddr, token, f.metricsNoAuth)
	if err != nil {
		return err
	}
	drain := make(chan struct{})
	fe, err := startFrontEnd(f.config, f.workdir, level, s, drain, hideTokenFile(f.tokenFile)...)
	if err != nil {
		return err
	}
	if f.noAuth && addr.socket == "" {
		// Once the config is good: a usage error stays its one line.
		fmt.Fprintln(s.err, noAuthWarning(f.addr))
	}
	defer fe.close()
	log, ctx, received := fe.log, fe.ctx, fe.received
	m := fe.metrics()
	hs, err := fe.srv.HTTPServer(mcpserver.HTTPOptions{
		Token: token, NoAuth: token == "", IdleTimeout: f.idleTimeout,
		MaxSessions: fe.cfg.Serve.MaxSessions, MaxRequestBytes: fe.cfg.Serve.MaxRequestBytes,
		FirstCallTimeout: fe.cfg.Serve.IdleSession,
		Metrics:          m.Handler(),
	})
	if err != nil {
		return failure("serve: %v", err)
	}
	ln, url, err := addr.listen(log)
	if err != nil {
		return failure("serve: %v", err)
	}
	running := fe.commandsRunning
	served := make(chan error, 2)
	go func() { served <- hs.Serve(reserveFDs(ln, "mcp", running, log)) }()
	if addr.socket != "" {
		log.Info("dsh serving MCP", "socket", addr.socket, "url", url, "auth", token != "")
	} else {
		log.Info("dsh serving MCP", "url", url, "auth", token != "")
	}
	if fe.cfg.Executor != config.ExecutorSSH && !fe.cfg.Local.Sandbox.On() {
		log.Warn(notIsolated)
	}
	var ms *http.Server
	if metricsAddr.tcp != "" {
		mln, err := net.Listen("tcp", metricsAddr.tcp)
		if err != nil {
			return failure("serve: --metrics-addr: %v", err)
		}
		// The same guards as the main listener's: a flood of idle
		// connections here must not take what sessions and commands need.
		ms = fe.srv.HealthServer(m.Handler(), token, token == "" || f.metricsNoAuth || isLoopback(metricsAddr.host), 0)
		go func() { served <- ms.Serve(reserveFDs(mln, "metrics", running, log)) }()
		log.Info("dsh serving metrics", "url", "http://"+mln.Addr().String()+"/metrics")
	}

	select {
	case err := <-served:
		// Serve ended without a shutdown: a listener failed.
		return failure("serve: %v", err)
	case <-ctx.Done():
	case <-drain:
		fe.drain(f.drainTimeout)
	}
	log.Info("shutting down", "signal", fmt.Sprint(received()))
	// At once: a call still running is cut and returns `Error: command
	// aborted` before its session ends (a drain waited for them, or cut
	// them already).
	fe.abortCalls()
	// The sessions first: their open event streams would hold Shutdown
	// for its whole grace.
	fe.srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, srv := range []*http.Server{hs, ms} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("closing the connections still open", "err", err)
			srv.Close()
		}
		<-served // http.ErrServerClosed
	}
	// The deferred close ends the sessions, then the app.
	return nil
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
}

// With drain set, the first SIGTERM closes it instead of cancelling the
// context (dsh serve drains).
func startFrontEnd(configPath, workdir string, level slog.Level, s streams, drain chan struct{}, opts ...host.Option) (*frontEnd, error) {
	cfg, wd, err := setup(configPath, workdir)
	if err != nil {
		return nil, err
	}
	fe := &frontEnd{cfg: cfg, log: newLevelLogger(s.err, level)}
	warnSelf(cfg, fe.log)
	fe.ctx, fe.received, fe.stop = drainSignals(context.Background(), drain)
	if fe.stack, err = host.Standard(cfg, append(opts, host.WithLogger(fe.log))...); err != nil {
		fe.stop()
		return nil, stackError(err)
	}
	fe.srv = mcpserver.New(serverOptions(fe.stack, wd, cfg, fe.log))
	return fe, nil
}

// close ends the sessions (and their tasks), then the stack, then stops
// watching for signals.
func (fe *frontEnd) close() {
	fe.srv.Close()
	closeStack(fe.stack, fe.log)
	fe.stop()
}

// hideTokenFile hides the token file from sandboxed commands
// (docs/spec.md §11).
func hideTokenFile(file string) []host.Option {
	if file == "" {
		return nil
	}
	// By its absolute path: the sandbox's cwd is the command's, not dsh's.
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return []host.Option{host.WithHidden(file)}
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
