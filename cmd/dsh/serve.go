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
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local/guard"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
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
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fe, err := startFrontEnd(configPath, workdir, s)
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
	return cmd
}

type serveFlags struct {
	config, workdir string
	addr, tokenFile string
	noAuth          bool
	idleTimeout     time.Duration
}

func newServeCmd(s streams) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --addr HOST:PORT",
		Short: "Serve MCP over streamable HTTP at /mcp",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return serve(f, s)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "", "address to listen on, HOST:PORT (required)")
	fl.StringVar(&f.config, "config", "", "config file (YAML)")
	fl.StringVar(&f.workdir, "workdir", "", "working directory of every session (default: the client's first root, else the current directory)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token (default: $"+tokenEnv+")")
	fl.BoolVar(&f.noAuth, "no-auth", false, "serve without a token; only on a loopback address")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", defaultIdleTimeout, "end a session idle for this long (0: never)")
	return cmd
}

func serve(f serveFlags, s streams) error {
	if f.addr == "" {
		return usageError("serve: --addr HOST:PORT is required")
	}
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usageError("serve: --addr %s: %v", f.addr, err)
	}
	if f.idleTimeout < 0 {
		return usageError("serve: --idle-timeout must not be negative, got %v", f.idleTimeout)
	}
	token, err := serveToken(f.tokenFile)
	if err != nil {
		return err
	}
	switch {
	case token != "" && f.noAuth:
		return usageError("serve: --no-auth given but a token is set (%s or --token-file): drop one", tokenEnv)
	case token == "" && !f.noAuth:
		return usageError("serve: no bearer token: set %s or --token-file (or --no-auth on a loopback address)", tokenEnv)
	case f.noAuth && !isLoopback(host):
		return usageError("serve: --no-auth is allowed only on a loopback address (127.0.0.0/8, ::1, localhost), not %q", f.addr)
	}
	if f.noAuth {
		// Commands share the host's network, loopback included: without
		// a token, any of them could drive this server.
		if cfg, err := loadConfig(f.config); err == nil && cfg.Local.Sandbox.On() && cfg.Local.Sandbox.Network {
			return usageError("serve: --no-auth is refused with local.sandbox.network: true: commands could reach this server on loopback")
		}
	}
	fe, err := startFrontEnd(f.config, f.workdir, s, hideTokenFile(f.tokenFile)...)
	if err != nil {
		return err
	}
	defer fe.close()
	log, ctx, received := fe.log, fe.ctx, fe.received
	h, err := fe.srv.Handler(mcpserver.HTTPOptions{Token: token, NoAuth: f.noAuth, IdleTimeout: f.idleTimeout})
	if err != nil {
		return failure("serve: %v", err)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return failure("serve: %v", err)
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("dsh serving MCP", "url", "http://"+ln.Addr().String()+"/mcp", "auth", !f.noAuth)

	select {
	case err := <-served:
		// Serve ended without a shutdown: the listener failed.
		return failure("serve: %v", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "signal", fmt.Sprint(received()))
	// The sessions first: their open event streams would hold Shutdown
	// for its whole grace.
	fe.srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("closing the connections still open", "err", err)
		hs.Close()
	}
	<-served // http.ErrServerClosed
	// The deferred close ends the sessions, then the app.
	return nil
}

// frontEnd is what dsh mcp and dsh serve both start from: the config, a
// logger on stderr, a context cancelled by SIGINT/SIGTERM, the app and the
// MCP server over it.
type frontEnd struct {
	log      *slog.Logger
	ctx      context.Context
	received func() os.Signal
	stop     func()
	stack    *host.Stack
	srv      *mcpserver.Server
}

func startFrontEnd(configPath, workdir string, s streams, opts ...host.Option) (*frontEnd, error) {
	cfg, wd, err := setup(configPath, workdir)
	if err != nil {
		return nil, err
	}
	fe := &frontEnd{log: newLogger(s.err)}
	warnSelf(cfg, fe.log)
	fe.ctx, fe.received, fe.stop = signalContext(context.Background())
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
	return []host.Option{host.WithHidden(file)}
}

// serveToken reads the token: --token-file, else $DSH_TOKEN; "" when
// neither is set.
func serveToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(guard.Getenv(tokenEnv)), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", usageError("serve: --token-file %s: %v", file, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", usageError("serve: --token-file %s is empty", file)
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", usageError("serve: --token-file %s must hold one line", file)
	}
	return token, nil
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
	v, _ := buildVersion()
	// When the last session is gone, give the memory the sessions used back
	// to the system (otherwise the runtime keeps it for minutes).
	return mcpserver.Options{
		Tools: st.Tools, Prompt: st.Prompt, Workdir: workdir, DefaultCwd: defaultCwd(cfg),
		Remote:  cfg.Executor == config.ExecutorSSH,
		Version: v, Logger: log, OnIdle: debug.FreeOSMemory,
	}
}
