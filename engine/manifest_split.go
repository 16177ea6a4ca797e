package main

import (
	"strings"
	"unicode"
)

// splitManifest is releaseutil.SplitManifests(text) as a list in its order: the same documents, found by a scan
// instead of Helm's separator expression `(?:^|\s*\n)---\s*`. Go's regexp tries that expression at every
// whitespace character and backtracks through each run, and the engine split every render's output with it
// after Helm had (about 1 % of a cold render's CPU, the most expensive symbol of the engine's profile). Helm's
// own sort still splits with it; this reads the text Helm printed. TestSplitManifestIsHelms holds the two equal
// over the charts' output and every string of a small alphabet up to a length, FuzzSplitManifest beyond.
//
// The expression matches at a "---" that starts the text or follows a newline, together with the run of
// whitespace before that newline and after the dashes (`\s` is ASCII's space, tab, newline, carriage return and
// form feed); the pieces between matches are trimmed of leading Unicode space and kept when not blank.
func splitManifest(text string) []string {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	var pieces []string
	keep := func(piece string) {
		if strings.TrimSpace(piece) != "" {
			pieces = append(pieces, strings.TrimLeftFunc(piece, unicode.IsSpace))
		}
	}
	start := 0 // where the current piece starts: the end of the last match
	if strings.HasPrefix(text, "---") {
		start = afterSpace(text, 3)
	}
	for {
		found := strings.Index(text[start:], "\n---")
		if found < 0 {
			break
		}
		newline := start + found
		begin := newline
		for begin > start && regexpSpace(text[begin-1]) {
			begin--
		}
		keep(text[start:begin])
		start = afterSpace(text, newline+4)
	}
	keep(text[start:])
	return pieces
}

// afterSpace is the end of the run of regexpSpace bytes that starts at `at`.
func afterSpace(text string, at int) int {
	for at < len(text) && regexpSpace(text[at]) {
		at++
	}
	return at
}

// regexpSpace is `\s` of Go's regexp (RE2's Perl class): space, tab, newline, form feed, carriage return.
func regexpSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
