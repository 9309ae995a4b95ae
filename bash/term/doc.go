// Package term is the screen of an interactive task: a program runs under a
// pseudo-terminal, its output is fed to a Screen, and the model reads what a
// person would see there (Text), not the bytes with their escape sequences,
// redraws and progress bars; it types with Keys.
//
// The emulator is github.com/charmbracelet/x/vt: maintained (v0.1.0 is of
// October 2026), pure Go, and it parses what xterm does, the alternate
// screen, application cursor keys (DECCKM), wide characters and grapheme
// clusters included, and answers a program's queries (cursor position,
// device attributes). github.com/hinshun/vt10x, the other pure Go choice,
// has no release and no commit since March 2022, and keeps one rune a cell
// with no notion of its width.
//
// x/vt is used as it is, not forked, but driven with care, because it is
// made for drawing a terminal inside a TUI rather than for taking whatever a
// program prints:
//
//   - Scrollback is switched off on both screens (a program in the
//     alternate screen otherwise piles up ~80 MiB): see vtinternals.go.
//   - Counts and margins it takes on trust are bounded (ESC[2147483646b
//     would print for hours, margins past the edge make it panic), and a
//     panic is recovered: see guard, Screen.feed.
//   - It scrolls by moving every cell of the screen, ~9 µs a line at 80×24,
//     so lines that would scroll off before anyone looks are skipped, with
//     exactly the result of drawing them: see fastpath.go. Output costs ~10 ns
//     a byte when it scrolls, ~25 with colours, ~70 for a full-screen
//     program redrawing (x/vt's own cost for every character printed).
//   - Its answers go through a pipe that blocks until read: goroutines drain
//     it, so a program that asks and does not read blocks nothing.
//
// A Screen of 80×24 takes ~0.5 MiB, most of it x/vt's 112 bytes for each
// cell of both screens.
package term
