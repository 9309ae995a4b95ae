package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/tool"
)

// The prompt dsh run asks with after the question (exact, docs/spec.md
// §9.6). The question's message already asks it ("Run this command?",
// "Allow network access to …?"), so the prompt only says how to answer.
const askPrompt = "[y/N] "

// terminalAsker is dsh run's asker: it asks on the terminal when stdin and
// stderr are one; otherwise nil (nobody can be asked: askFallback). It
// calls started before it asks: the start-ups' log lines (a sweep's)
// go to the terminal before the question, though the command does not
// wait for them.
func terminalAsker(errOut io.Writer, started func()) tool.Asker {
	f, ok := errOut.(*os.File)
	if !ok || !isTerminal(os.Stdin) || !isTerminal(f) {
		return nil
	}
	ask := promptAsker(os.Stdin, f)
	return tool.AskerFunc(func(ctx context.Context, q tool.Question) (tool.Answer, error) {
		started()
		return ask.Ask(ctx, q)
	})
}

// promptAsker prints the question on w and reads the answer from r: y or
// yes, in any case, accepts; anything else, or the end of input, declines.
// Remembering is not offered: dsh run makes one call.
func promptAsker(r io.Reader, w io.Writer) tool.Asker {
	lines := bufio.NewReader(r)
	return tool.AskerFunc(func(ctx context.Context, q tool.Question) (tool.Answer, error) {
		fmt.Fprintf(w, "%s\n\n%s", q.Message, askPrompt)
		got := make(chan string, 1)
		// A read that ctx abandons ends with the input; dsh run exits
		// right after its call anyway.
		go func() {
			line, _ := lines.ReadString('\n')
			got <- line
		}()
		select {
		case line := <-got:
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return tool.Answer{Choice: tool.Accepted}, nil
			}
			return tool.Answer{Choice: tool.Declined}, nil
		case <-ctx.Done():
			fmt.Fprintln(w)
			return tool.Answer{}, ctx.Err()
		}
	})
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}
