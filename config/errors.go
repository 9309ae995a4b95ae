package config

import (
	"fmt"
	"strings"
)

// Error is a configuration error: which key, what is wrong with it, and the
// line of the file where it is (when the config came from a file).
//
// Its text reads "<key> <what>", "<key>: unknown key" and the like, then
// " (line N)" and a hint when there is one:
//
//	local.graceMs must be a positive finite number (line 4)
//	local.timeoutMsec: unknown key (line 3); did you mean local.timeoutMs?
//
// A section's Validate names its keys relative to the section
// ("graceMs must be a positive finite number"); [Parse] and
// [File.Validate] name them from the top of the file.
type Error struct {
	// Key is the key's path ("local.env.scrub", "tools[1]"); empty for an
	// error about the whole document.
	Key string
	// Line is the key's line in the file, 0 when unknown.
	Line int
	// Hint completes the message: "did you mean local.timeoutMs?".
	Hint string

	sep   string // between the key and msg: " " or ": "
	msg   string
	other string // a second key msg refers to, rooted like Key
	tail  string // text after other
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Key)
	if e.Key != "" {
		b.WriteString(e.sep)
	}
	b.WriteString(e.msg)
	if e.other != "" {
		b.WriteString(" " + e.other)
	}
	b.WriteString(e.tail)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// within roots e's keys at section ("local"), for an error a section's
// Validate returned, and takes the key's line from lines.
func (e *Error) within(section string, lines map[string]int) *Error {
	c := *e
	c.Key = join(section, e.Key)
	if e.other != "" {
		c.other = join(section, e.other)
	}
	if c.Line == 0 {
		c.Line = lines[c.Key]
	}
	if c.Line == 0 && c.other != "" {
		c.Line = lines[c.other]
	}
	// A key the file leaves out has no line: its mapping's is the place.
	for k := c.Key; c.Line == 0 && k != ""; {
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
		c.Line = lines[k]
	}
	return &c
}

// join is the path of key inside section.
func join(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

// keyErr is "<key> <msg>": a value the key cannot take.
func keyErr(key string, line int, format string, args ...any) *Error {
	return &Error{Key: key, Line: line, sep: " ", msg: fmt.Sprintf(format, args...)}
}

// keyProblem is "<key>: <msg>": something about the key itself.
func keyProblem(key string, line int, msg string) *Error {
	return &Error{Key: key, Line: line, sep: ": ", msg: msg}
}

// docErr is an error about the document as a whole.
func docErr(line int, format string, args ...any) *Error {
	return &Error{Line: line, msg: fmt.Sprintf(format, args...)}
}

func errPositive(key string, line int) *Error {
	return keyErr(key, line, "must be a positive finite number")
}

func errNonNegative(key string, line int) *Error {
	return keyErr(key, line, "must be a non-negative finite number")
}

func errType(key, want string, line int) *Error {
	return keyErr(key, line, "must be %s", want)
}

// errUnknownKey is an unknown key, with the known key it most likely
// meant when there is one.
func errUnknownKey(key string, line int, meant string) *Error {
	e := keyProblem(key, line, "unknown key")
	if meant != "" {
		e.Hint = "did you mean " + meant + "?"
	}
	return e
}

// errOneOf is a value that is not one of allowed.
func errOneOf(key, v string, line int, allowed []string) *Error {
	e := keyProblem(key, line, fmt.Sprintf("%q is not one of %s", v, quoteList(allowed)))
	if s := suggestWord(v, allowed); s != "" {
		e.Hint = fmt.Sprintf("did you mean %q?", s)
	}
	return e
}

func quoteList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " or " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
